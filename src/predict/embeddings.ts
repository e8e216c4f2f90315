/**
 * Pluggable embeddings of prefix histories, appended to the hashed features (features.ts).
 *
 * `predict` is synchronous in the SuccessPredictor contract, while an embeddings endpoint is remote.
 * Choice: embeddings are fetched ahead in `prepare(histories)` (async, batched, cached by text) and
 * `embed` only reads the cache; asking for an unprepared history throws
 * {@link EmbeddingNotPreparedError}. Caller-supplied vectors need no preparation.
 */
import type OpenAI from 'openai';
import type { History } from './types.ts';

export interface HistoryEmbedder {
  readonly dim: number;
  /** Names the source (model, dim) so a saved predictor refuses a different one. */
  readonly signature: string;
  prepare?(histories: readonly History[]): Promise<void>;
  embed(h: History): ArrayLike<number>;
}

export class EmbeddingNotPreparedError extends Error {
  override name = 'EmbeddingNotPreparedError';
}

export class EmbeddingResponseError extends Error {
  override name = 'EmbeddingResponseError';
}

/**
 * The text embedded for a history: the question, then each turn's action and observation. When it is
 * longer than `maxChars`, the question is kept and the turns are cut from the front (recent turns
 * matter most for what happens next).
 */
export function historyText(h: History, maxChars = 4000): string {
  const head = `Question: ${h.prompt.question}`;
  const turns = h.turns.map((t, i) => `Turn ${i + 1} ${t.action.type}: ${t.action.input}\nObservation: ${t.observation}`).join('\n');
  const body = turns ? `${head}\n${turns}` : head;
  if (body.length <= maxChars) return body;
  const room = Math.max(0, maxChars - head.length - 5);
  return `${head}\n…${turns.slice(turns.length - room)}`;
}

export interface OpenAIEmbedderOptions {
  /** Embedding model name sent to the endpoint. */
  model: string;
  /** Vector length the endpoint returns (checked on every response). */
  dim: number;
  /** A ready client; otherwise one is built from baseURL/apiKey. */
  client?: OpenAI;
  /** e.g. http://localhost:8000/v1 (vLLM, llama.cpp server, OpenAI). */
  baseURL?: string;
  apiKey?: string;
  /** Ask the endpoint to shorten vectors to `dim` (models that support `dimensions`). Default false. */
  sendDimensions?: boolean;
  /** Texts per request. Default 64. */
  batchSize?: number;
  /** Characters of history text embedded (see {@link historyText}). Default 4000. */
  maxChars?: number;
  /** Cached vectors kept; older ones are dropped when a new batch needs room. Default 100,000. */
  cacheSize?: number;
}

/** Embeddings from an OpenAI-compatible `POST /v1/embeddings` endpoint, cached by text. */
export class OpenAIEmbedder implements HistoryEmbedder {
  readonly dim: number;
  readonly signature: string;
  /** Made on the first `prepare`: the OpenAI SDK (~0.1 CPU-s to load) loads only for a run that embeds. */
  private client?: OpenAI;
  private readonly clientOptions: { baseURL?: string; apiKey: string };
  private readonly cache = new Map<string, Float32Array>();
  private readonly opts: Required<Pick<OpenAIEmbedderOptions, 'batchSize' | 'maxChars' | 'cacheSize' | 'sendDimensions' | 'model'>>;

  constructor(options: OpenAIEmbedderOptions) {
    if (!Number.isInteger(options.dim) || options.dim < 1) throw new EmbeddingResponseError(`embeddings: dim must be a positive integer, got ${options.dim}`);
    this.dim = options.dim;
    this.client = options.client;
    this.clientOptions = { ...(options.baseURL !== undefined ? { baseURL: options.baseURL } : {}), apiKey: options.apiKey ?? 'unused' };
    this.opts = {
      model: options.model,
      batchSize: options.batchSize ?? 64,
      maxChars: options.maxChars ?? 4000,
      cacheSize: options.cacheSize ?? 100_000,
      sendDimensions: options.sendDimensions ?? false,
    };
    this.signature = `openai-embeddings(model=${options.model},dim=${options.dim},chars=${this.opts.maxChars})`;
  }

  async prepare(histories: readonly History[]): Promise<void> {
    const wanted = [...new Set(histories.map((h) => historyText(h, this.opts.maxChars)))];
    const missing = wanted.filter((t) => !this.cache.has(t));
    if (missing.length === 0) return;
    this.makeRoom(missing.length, new Set(wanted));
    const client = (this.client ??= new (await import('openai')).default(this.clientOptions));
    for (let i = 0; i < missing.length; i += this.opts.batchSize) {
      const batch = missing.slice(i, i + this.opts.batchSize);
      const res = await client.embeddings.create({
        model: this.opts.model,
        input: batch,
        encoding_format: 'float',
        ...(this.opts.sendDimensions ? { dimensions: this.dim } : {}),
      });
      if (res.data.length !== batch.length) {
        throw new EmbeddingResponseError(`embeddings: sent ${batch.length} texts to model "${this.opts.model}", got ${res.data.length} vectors back`);
      }
      for (const [k, d] of res.data.entries()) {
        const index = typeof d.index === 'number' ? d.index : k;
        const vec = d.embedding as unknown;
        if (!Array.isArray(vec) || vec.length !== this.dim) {
          const got = Array.isArray(vec) ? `length ${vec.length}` : typeof vec;
          throw new EmbeddingResponseError(
            `embeddings: model "${this.opts.model}" returned a vector of ${got}, expected length ${this.dim}: set dim to the model's size (or sendDimensions: true)`,
          );
        }
        this.cache.set(batch[index], Float32Array.from(vec as number[]));
      }
    }
  }

  embed(h: History): Float32Array {
    const v = this.cache.get(historyText(h, this.opts.maxChars));
    if (!v)
      throw new EmbeddingNotPreparedError(
        `no embedding for a history of prompt "${h.prompt.id}" (${h.turns.length} turns): await predictor.prepare(histories) before predict/train`,
      );
    return v;
  }

  /** Drops the oldest cached vectors not needed now, so `incoming` new ones fit under cacheSize. */
  private makeRoom(incoming: number, keep: ReadonlySet<string>): void {
    let excess = this.cache.size + incoming - this.opts.cacheSize;
    for (const key of this.cache.keys()) {
      if (excess <= 0) break;
      if (!keep.has(key)) {
        this.cache.delete(key);
        excess--;
      }
    }
  }
}

/** Vectors supplied by the caller (for example from its own encoder), one per history. */
export function callerEmbeddings(options: { dim: number; name?: string; embed: (h: History) => ArrayLike<number> }): HistoryEmbedder {
  return { dim: options.dim, signature: `caller(${options.name ?? 'vectors'},dim=${options.dim})`, embed: options.embed };
}
