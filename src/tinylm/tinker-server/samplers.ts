/**
 * The llama.cpp engines `serve --tinker` samples on: one per weights file sampled from (the base GGUF,
 * or sampler weights a model saved), loaded on first use. Each engine holds a model and its KV cache,
 * so at most `max` are loaded: a file not loaded takes the place of the least recently used idle one,
 * and when all `max` are sampling the request is refused (SamplersBusyError) rather than queued.
 * A slot is taken when the request arrives (`reserve`), so concurrent requests are counted exactly.
 */
import type { LlamaEngine } from '../llama-engine.ts';

interface Loaded {
  engine: Promise<LlamaEngine>;
  users: number;
  lastUse: number;
  retired: boolean;
}

export class SamplersBusyError extends Error {
  override name = 'SamplersBusyError';
}

export class Samplers {
  private readonly engines = new Map<string, Loaded>();
  private clock = 0;

  constructor(
    private readonly load: (file: string) => Promise<LlamaEngine>,
    readonly max: number,
  ) {}

  /** Takes a slot on `file`'s engine now (loading it later, in `run`); throws SamplersBusyError when none is free. */
  reserve(file: string): { run<T>(work: (engine: LlamaEngine) => Promise<T>): Promise<T>; release(): void } {
    let e = this.engines.get(file);
    if (!e) {
      if (this.engines.size >= this.max) {
        const idle = [...this.engines].filter(([, x]) => x.users === 0).sort(([, a], [, b]) => a.lastUse - b.lastUse)[0];
        if (!idle)
          throw new SamplersBusyError(
            `all ${this.max} sampler engines are busy with other weights; retry when a sample finishes, or raise --tinker-max-samplers`,
          );
        this.retire(idle[0]);
      }
      this.engines.set(file, (e = { engine: this.load(file), users: 0, lastUse: 0, retired: false }));
      // A load that fails is forgotten, so the next request tries again rather than reusing the failure.
      e.engine.catch(() => this.engines.get(file) === e && this.engines.delete(file));
    }
    const entry = e;
    entry.users++;
    entry.lastUse = ++this.clock;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      entry.users--;
      if (entry.retired && entry.users === 0) void entry.engine.then((x) => x.dispose()).catch(() => undefined);
    };
    return {
      run: async (work) => {
        try {
          return await work(await entry.engine);
        } finally {
          release();
        }
      },
      release,
    };
  }

  /** How many engines are loaded (or loading). */
  get loaded(): number {
    return this.engines.size;
  }

  /** Drops `file`'s engine (its weights were deleted): freed now if idle, else when its last sample ends. */
  retire(file: string): void {
    const e = this.engines.get(file);
    if (!e) return;
    this.engines.delete(file);
    e.retired = true;
    if (e.users === 0) void e.engine.then((x) => x.dispose()).catch(() => undefined);
  }
}
