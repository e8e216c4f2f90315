/**
 * The saved weights of `serve --tinker`: sampler weights (GGUF) and training states (weights and
 * optimizer), named by `tinker://MODEL/KIND/NAME` paths. Kept in a folder with an index (`index.json`),
 * so with `--tinker-state-dir DIR` a run's states outlive the server: after a restart `--resume` loads
 * them. Each model keeps its last `keepPerModel` saves of each kind (older ones are deleted, their
 * paths then answer 404), so one run's saves never push out another's.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { UserError } from '../../util/user-error.ts';

export type SavedKind = 'sampler_weights' | 'weights';

const NAME = /^[A-Za-z0-9._-]{1,64}$/;
const FILE = /^(?:sampler_weights|weights)-[0-9a-f]{12}\.(?:gguf|snapshot)$/;

const indexSchema = z.object({
  version: z.literal(1),
  saves: z.array(
    z.object({ path: z.string().max(300), kind: z.enum(['sampler_weights', 'weights']), model: z.string().max(100), file: z.string().regex(FILE) }),
  ),
});
type Save = z.infer<typeof indexSchema>['saves'][number];

/** A state folder whose index cannot be read (said as one line by the CLI). */
export class SavedIndexError extends UserError {
  override name = 'SavedIndexError';
}

/** A save name that is not one this server writes. */
export class SavedNameError extends Error {
  override name = 'SavedNameError';
}

export class SavedStates {
  /** In save order, oldest first (the index's order). */
  private saves: Save[] = [];

  /**
   * @param dir the folder (it exists); its index is read when there is one
   * @param onDrop called with a file before it is deleted (a sampler engine on it is retired)
   */
  constructor(
    private readonly dir: string,
    private readonly keepPerModel: number,
    private readonly onDrop: (file: string) => void = () => undefined,
  ) {
    const index = join(dir, 'index.json');
    if (!existsSync(index)) return;
    let raw: unknown;
    try {
      raw = JSON.parse(readFileSync(index, 'utf8'));
    } catch (e) {
      throw new SavedIndexError(`${index}: not JSON (${(e as Error).message}); move it away to start with no saved states`);
    }
    const parsed = indexSchema.safeParse(raw);
    if (!parsed.success)
      throw new SavedIndexError(`${index}: not a saved-state index of this version (${parsed.error.issues[0]!.message}); move it away to start afresh`);
    // A file that is gone (deleted by hand) is dropped from the index rather than answered later as a broken path.
    this.saves = parsed.data.saves.filter((s) => existsSync(join(dir, s.file)));
  }

  /** The file a path names, when it names a save of `kind`. */
  file(path: string, kind: SavedKind): string | undefined {
    const s = this.saves.find((x) => x.path === path && x.kind === kind);
    return s && join(this.dir, s.file);
  }

  /** How many saves are kept (every kind and model). */
  get size(): number {
    return this.saves.length;
  }

  /** Writes `bytes` as `name` (default `${kind}-${counter}`) of `model`; its path. A save of the same path replaces it. */
  save(kind: SavedKind, model: string, name: string, bytes: Uint8Array): string {
    if (!NAME.test(name)) throw new SavedNameError(`path ${name}: a name of letters, digits, '.', '_' or '-' (at most 64)`);
    const path = `tinker://${model}/${kind}/${name}`;
    const file = `${kind}-${randomBytes(6).toString('hex')}.${kind === 'weights' ? 'snapshot' : 'gguf'}`;
    writeFileSync(join(this.dir, file), bytes, { flag: 'wx' });
    const dropped = this.saves.filter((s) => s.path === path);
    this.saves = this.saves.filter((s) => s.path !== path);
    this.saves.push({ path, kind, model, file });
    const mine = this.saves.filter((s) => s.model === model && s.kind === kind);
    const excess = mine.slice(0, Math.max(0, mine.length - this.keepPerModel));
    this.saves = this.saves.filter((s) => !excess.includes(s));
    this.writeIndex();
    // Files go only after the index no longer names them: a crash in between leaves a stray file, never a broken path.
    for (const s of [...dropped, ...excess]) {
      const f = join(this.dir, s.file);
      this.onDrop(f);
      rmSync(f, { force: true });
    }
    return path;
  }

  private writeIndex(): void {
    const index = join(this.dir, 'index.json');
    const tmp = `${index}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify({ version: 1, saves: this.saves }));
    renameSync(tmp, index);
  }
}
