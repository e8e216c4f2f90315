/**
 * The saved weights of `serve --tinker`: sampler weights (GGUF) and training states (weights and
 * optimizer), named by `tinker://MODEL/KIND/NAME` paths. Kept in a folder with an index (`index.json`),
 * so with `--tinker-state-dir DIR` a run's states outlive the server: after a restart `--resume` loads
 * them. Each model keeps its last `keepPerModel` saves of each kind (older ones are deleted, their
 * paths then answer 404), so one run's saves never push out another's; and the server keeps at most
 * `maxSaves` in all: past it the oldest saves of models no longer loaded go first (a finished run's, or
 * a previous server's), and when every kept save belongs to a loaded model the new one is refused.
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

/** A save past the server's bound when every kept save belongs to a loaded model (nothing is written). */
export class SavedFullError extends Error {
  override name = 'SavedFullError';
}

/** How many saves the folder keeps, and which models' saves are still in use. */
export interface SaveBounds {
  /** Saves per model and kind; older ones are deleted. */
  keepPerModel: number;
  /** Saves in all, every model and kind. */
  maxSaves: number;
  /** Whether a model is loaded (its saves are kept over unloaded models'). */
  isLoaded: (model: string) => boolean;
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
    private readonly bounds: SaveBounds,
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

  /**
   * Writes `bytes` as `name` (default `${kind}-${counter}`) of `model`; its path. A save of the same path
   * replaces it. SavedFullError, before anything is written, when the server's bound is reached and
   * every kept save belongs to a loaded model.
   */
  save(kind: SavedKind, model: string, name: string, bytes: Uint8Array): string {
    const file = `${kind}-${randomBytes(6).toString('hex')}.${kind === 'weights' ? 'snapshot' : 'gguf'}`;
    const added: Save = { path: this.check(kind, model, name), kind, model, file };
    const kept = this.keptWith(added);
    writeFileSync(join(this.dir, file), bytes, { flag: 'wx' });
    this.replace(kept);
    return added.path;
  }

  /** The path a save would have; SavedNameError or SavedFullError when it would be refused now (for a refusal before the work). */
  check(kind: SavedKind, model: string, name: string): string {
    if (!NAME.test(name)) throw new SavedNameError(`path ${name}: a name of letters, digits, '.', '_' or '-' (at most 64)`);
    const path = `tinker://${model}/${kind}/${name}`;
    this.keptWith({ path, kind, model, file: '' });
    return path;
  }

  /** The saves kept once `added` is: its model's oldest past keepPerModel, then unloaded models' oldest past maxSaves, go. */
  private keptWith(added: Save): Save[] {
    const { path, kind, model } = added;
    let kept = [...this.saves.filter((s) => s.path !== path), added];
    const mine = kept.filter((s) => s.model === model && s.kind === kind);
    const excess = new Set(mine.slice(0, Math.max(0, mine.length - this.bounds.keepPerModel)));
    kept = kept.filter((s) => !excess.has(s));
    // Oldest first: the saves of models no longer loaded make room.
    for (const s of [...kept]) {
      if (kept.length <= this.bounds.maxSaves) break;
      if (s !== added && !this.bounds.isLoaded(s.model)) kept = kept.filter((k) => k !== s);
    }
    if (kept.length > this.bounds.maxSaves)
      throw new SavedFullError(
        `${this.bounds.maxSaves} saves are kept on this server, all of models still loaded (--tinker-max-saves); unload a finished run's model or save under a name it already has`,
      );
    return kept;
  }

  /** Deletes every save of `model` (a model unloaded from a server whose saves do not outlive it). */
  dropModel(model: string): void {
    if (this.saves.some((s) => s.model === model)) this.replace(this.saves.filter((s) => s.model !== model));
  }

  /** Keeps `kept` in the index, then deletes the files of the saves it no longer names. */
  private replace(kept: Save[]): void {
    const gone = this.saves.filter((s) => !kept.includes(s));
    this.saves = kept;
    this.writeIndex();
    // Files go only after the index no longer names them: a crash in between leaves a stray file, never a broken path.
    for (const s of gone) {
      const f = join(this.dir, s.file);
      this.onDrop(f);
      rmSync(f, { force: true });
    }
  }

  private writeIndex(): void {
    const index = join(this.dir, 'index.json');
    const tmp = `${index}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify({ version: 1, saves: this.saves }));
    renameSync(tmp, index);
  }
}
