/**
 * llama.cpp through node-llama-cpp, set up so its probabilities are the policy's: CPU only
 * (`build: 'never'` uses the prebuilt binaries shipped in npm packages, no network), `threads: 1`,
 * no flash attention and an F32 KV cache (the defaults differ from an F32 re-implementation by
 * ~1e-2 nats), and sampling at temperature 1 with no top-k/top-p/min-p and an explicit seed, so the
 * reported probability of each sampled token is its softmax probability.
 *
 * A context holds `sequences` KV caches. A call takes the free sequence whose cached tokens share the
 * longest prefix with its input, erases the rest and evaluates only the new tokens — a trajectory's
 * next turn re-uses its previous turns' cache; a branch re-evaluates from where it diverges.
 * Calls made at the same time run on different sequences, and node-llama-cpp evaluates their tokens
 * together in one llama.cpp batch (one decode per generated token of every running sequence: 16
 * sequences made 1.1–1.4× the tokens per CPU-second of one on the d64 model, 1.5× on a d256 stand-in,
 * because one decode's fixed cost is shared; per-token sampling and bookkeeping do not shrink). Each call samples with its own seeded sampler, so its
 * tokens do not depend on what runs beside it — except that batching changes the float rounding of
 * the logits (~1e-6 nats), which on rare occasions flips a sampled token whose random draw lies that
 * close to a boundary (test/tinylm/batched-generation.test.ts, docs/tinylm.md).
 */
import { getLlama, type Llama, type LlamaContext, type LlamaContextSequence, type LlamaModel as NativeModel, type Token } from 'node-llama-cpp';
import { bySequenceId, gateSampling } from './llama-batching.ts';

export interface LlamaEngineOptions {
  /** KV caches (parallel sequences) in the context: calls beyond this many wait for a free one. Default 4. */
  sequences?: number;
  /** Tokens per sequence. Default: the model's context length. */
  contextSize?: number;
  /**
   * 'grouped' (default): the running sequences' next tokens go into one batch, listed by sequence id,
   * which llama.cpp then computes as one micro-batch (src/tinylm/llama-batching.ts); 'plain':
   * node-llama-cpp's own batching (kept for the bench's comparison).
   */
  batching?: 'grouped' | 'plain';
  /** Threads per evaluation. Default 1 (2 threads on a 2-core machine cost ~15 ms/token in synchronisation). */
  threads?: number;
}

export interface GenerateOptions {
  /** Stop after this many tokens. */
  maxTokens: number;
  /** Token ids that end the generation (included in the output). */
  stop: readonly number[];
  /** Sampling seed; the same seed, weights and prefix give the same tokens. */
  seed: number;
  /** Argmax decoding instead of sampling. */
  greedy?: boolean;
  /**
   * Sampler overrides (OpenAI-style requests). The defaults — temperature 1, no top-k/top-p/min-p —
   * make each reported probability the model's softmax probability; other settings report the
   * probability llama.cpp's sampler chain assigns.
   */
  sampling?: { temperature?: number; topK?: number; topP?: number; minP?: number };
  /** Called after each token with all tokens so far; returning true ends the generation ('until'). */
  until?: (ids: readonly number[]) => boolean;
  signal?: AbortSignal;
}

export interface Generated {
  ids: number[];
  /** log π(token | prefix) at temperature 1, per generated token. */
  logprobs: number[];
  /** Why generation ended. */
  stop: 'stop_token' | 'eos' | 'length' | 'until';
  /** Prefix tokens this call evaluated (the others were re-used from the sequence's cache). */
  promptTokens: number;
}

/** Raised when a sequence does not fit the context. */
export class ContextOverflowError extends Error {
  override name = 'ContextOverflowError';
}

let llamaPromise: Promise<Llama> | undefined;
/** The process-wide llama.cpp binding (CPU, prebuilt, quiet). */
export function loadLlama(): Promise<Llama> {
  llamaPromise ??= getLlama({ gpu: false, build: 'never', logLevel: 'error' as never, progressLogs: false });
  return llamaPromise;
}

interface Slot {
  seq: LlamaContextSequence;
  busy: boolean;
}

export class LlamaEngine {
  private constructor(
    readonly model: NativeModel,
    private readonly context: LlamaContext,
    private readonly slots: Slot[],
    readonly contextSize: number,
  ) {}

  private waiters: Array<() => void> = [];

  /** Sequences in the context (calls that run at once). */
  get sequences(): number {
    return this.slots.length;
  }

  /** Sequences not taken by a running call. */
  get idleSequences(): number {
    return this.slots.filter((s) => !s.busy).length;
  }

  /** Tokens in the model's vocabulary (valid ids are 0 … vocabSize − 1). */
  get vocabSize(): number {
    return this.model.fileInfo.metadata.tokenizer.ggml.tokens.length;
  }

  /** Loads a GGUF file (read into memory, not mapped, so a later file at the same path cannot change it). */
  static async load(modelPath: string, options: LlamaEngineOptions = {}): Promise<LlamaEngine> {
    const llama = await loadLlama();
    const model = await llama.loadModel({ modelPath, useMmap: false, gpuLayers: 0 });
    const n = options.sequences ?? 4;
    const grouped = options.batching !== 'plain';
    let created: LlamaContext | undefined;
    const context = await model.createContext({
      sequences: n,
      contextSize: options.contextSize ?? model.trainContextSize,
      threads: options.threads ?? 1,
      flashAttention: false,
      experimentalKvCacheKeyType: 'F32',
      experimentalKvCacheValueType: 'F32',
      ...(grouped ? { batching: { itemPrioritizationStrategy: bySequenceId(() => created) } } : {}),
    } as Parameters<NativeModel['createContext']>[0]);
    created = context;
    gateSampling(context, grouped);
    const slots = Array.from({ length: n }, () => ({ seq: context.getSequence(), busy: false }));
    return new LlamaEngine(model, context, slots, context.contextSize);
  }

  /** Takes the free sequence sharing the longest prefix with `prefix`, waiting (abortably) while all are busy. */
  private async acquire(prefix: readonly number[], signal?: AbortSignal): Promise<Slot> {
    for (;;) {
      signal?.throwIfAborted();
      let best: Slot | undefined;
      let bestLen = -1;
      for (const s of this.slots) {
        if (s.busy) continue;
        const len = commonPrefix(s.seq.contextTokens, prefix);
        if (len > bestLen) [best, bestLen] = [s, len];
      }
      if (best) {
        best.busy = true;
        return best;
      }
      await new Promise<void>((resolve, reject) => {
        const wake = () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        };
        const onAbort = () => {
          this.waiters = this.waiters.filter((w) => w !== wake);
          reject(signal!.reason);
        };
        this.waiters.push(wake);
        signal?.addEventListener('abort', onAbort, { once: true });
      });
    }
  }

  /**
   * Returns a sequence to the pool. After a failed or aborted call its cache may hold part of an
   * evaluation, so it is cleared first (the next call re-evaluates its prefix instead of trusting it).
   */
  private async release(slot: Slot, failed: boolean): Promise<void> {
    if (failed) await slot.seq.clearHistory().catch(() => undefined);
    slot.busy = false;
    this.waiters.shift()?.();
  }

  /** Runs `f` on a sequence taken from the pool and always gives it back, cleared if `f` failed. */
  private async withSlot<T>(prefix: readonly number[], signal: AbortSignal | undefined, f: (seq: LlamaContextSequence) => Promise<T>): Promise<T> {
    const slot = await this.acquire(prefix, signal);
    let failed = true;
    try {
      const out = await f(slot.seq);
      failed = false;
      return out;
    } finally {
      await this.release(slot, failed);
    }
  }

  /**
   * Puts `tokens` minus its last token in the sequence's cache (re-using the common prefix) and
   * returns the last token, which the caller evaluates with the options it needs.
   */
  private async prepare(seq: LlamaContextSequence, tokens: readonly number[]): Promise<Token[]> {
    if (tokens.length === 0) throw new RangeError('cannot evaluate an empty token sequence');
    if (tokens.length > this.contextSize) throw new ContextOverflowError(`${tokens.length} tokens do not fit the context of ${this.contextSize}`);
    const keep = Math.min(commonPrefix(seq.contextTokens, tokens), tokens.length - 1);
    if (keep < seq.nextTokenIndex) await seq.eraseContextTokenRanges([{ start: keep, end: seq.nextTokenIndex }]);
    return tokens.slice(keep) as Token[];
  }

  /** Samples a continuation of `prefix` (ids, no BOS added) with its per-token log-probabilities. */
  async generate(prefix: readonly number[], options: GenerateOptions): Promise<Generated> {
    return this.withSlot(prefix, options.signal, async (seq) => {
      const input = await this.prepare(seq, prefix);
      const ids: number[] = [];
      const logprobs: number[] = [];
      let stop: Generated['stop'] = 'length';
      const room = this.contextSize - prefix.length;
      const max = Math.min(options.maxTokens, room);
      if (max <= 0) return { ids, logprobs, stop, promptTokens: 0 };
      const sampling = options.greedy
        ? { temperature: 0, seed: options.seed }
        : { temperature: 1, topK: 0, topP: 1, minP: 0, ...defined(options.sampling ?? {}), seed: options.seed };
      const eos = this.model.tokens.eos;
      for await (const out of seq.evaluateWithMetadata(input, { confidence: true }, sampling)) {
        options.signal?.throwIfAborted();
        ids.push(out.token);
        logprobs.push(Math.log(out.confidence));
        if (options.stop.includes(out.token)) stop = 'stop_token';
        else if (out.token === eos) stop = 'eos';
        else if (options.until?.(ids)) stop = 'until';
        if (stop !== 'length' || ids.length >= max) break;
      }
      return { ids, logprobs, stop, promptTokens: input.length };
    });
  }

  /**
   * log π(tokens[i] | tokens[<i]) for i ≥ 1 under llama.cpp (index 0 gets 0), and optionally the
   * full next-token distributions — the reference the trainer's forward pass is checked against.
   */
  async score(tokens: readonly number[], options: { distributions?: boolean } = {}): Promise<{ logprobs: number[]; distributions?: Float64Array[] }> {
    return this.withSlot([], undefined, async (seq) => {
      await seq.clearHistory();
      const input = tokens.map((t, i) => (i + 1 < tokens.length ? ([t, { generateNext: { probabilities: true } }] as const) : t)) as Parameters<
        LlamaContextSequence['controlledEvaluate']
      >[0];
      const res = await seq.controlledEvaluate(input);
      const logprobs = [0];
      const distributions: Float64Array[] = [];
      for (let i = 0; i + 1 < tokens.length; i++) {
        const probs = res[i]?.next.probabilities;
        if (!probs) throw new Error(`llama.cpp returned no distribution after token ${i}`);
        logprobs.push(Math.log(probs.get(tokens[i + 1]! as Token) ?? 0));
        if (options.distributions) {
          let n = 0;
          for (const tok of probs.keys()) n = Math.max(n, tok + 1);
          const d = new Float64Array(n);
          for (const [tok, p] of probs) d[tok] = p;
          distributions.push(d);
        }
      }
      return options.distributions ? { logprobs, distributions } : { logprobs };
    });
  }

  async dispose(): Promise<void> {
    await this.context.dispose();
    await this.model.dispose();
  }
}

/** The object without its undefined fields (so they do not override defaults in a spread). */
function defined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function commonPrefix(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}
