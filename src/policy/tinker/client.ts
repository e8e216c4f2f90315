/**
 * A client of the Tinker training API over plain HTTP (wire.ts): a session, one trainable model, its
 * futures, sampling, forward_backward, optim_step, and weights for the sampler and for checkpoints.
 * The API key goes in `X-API-Key`, as the official SDK sends it; it never appears in an error message.
 */
import { PolicyCallError } from '../errors.ts';
import { boundedFetch, ResponseTooLargeError } from '../openai/bounded-fetch.ts';
import {
  forwardBackwardOutputSchema,
  sampleResponseSchema,
  TRY_AGAIN,
  type AdamParams,
  type Datum,
  type ForwardBackwardOutput,
  type SampleRequest,
  type SampleResponse,
} from './wire.ts';

type Json = Record<string, unknown>;

export interface TinkerClientOptions {
  /** The server root, e.g. https://tinker.example or http://127.0.0.1:8080 (`/api/v1/...` is appended). */
  baseURL: string;
  apiKey?: string;
  /** One HTTP request's limit (a future is polled again after it). Default 120 s. */
  timeoutMs?: number;
  /** Total wait for one future's result. Default 30 minutes (a large optimizer step on a busy cluster). */
  futureTimeoutMs?: number;
}

/** An answer too long to show is cut here: a server's error page can be anything. */
const MAX_MESSAGE_CHARS = 400;
/** A training call's answer (per-token log-probabilities of every datum) can be large; a sample's is small. */
const MAX_RESPONSE_BYTES = 256 * 1024 * 1024;

export class TinkerClient {
  readonly root: string;
  private readonly fetch = boundedFetch(MAX_RESPONSE_BYTES);
  private readonly headers: Record<string, string>;
  private session?: string;
  private seq = 0;

  constructor(private readonly options: TinkerClientOptions) {
    this.root = options.baseURL.replace(/\/+$/, '').replace(/\/api\/v1$/, '');
    this.headers = { 'content-type': 'application/json', ...(options.apiKey ? { 'x-api-key': options.apiKey } : {}) };
  }

  /** `message` with the key blanked out, cut to a readable length, naming the endpoint. */
  private describe(path: string, message: string): string {
    const key = this.options.apiKey;
    const text = key ? message.split(key).join('[API key]') : message;
    return `${this.root}${path}: ${text.length > MAX_MESSAGE_CHARS ? `${text.slice(0, MAX_MESSAGE_CHARS)}…` : text}`;
  }

  /** One POST; transport failures and 408/429/5xx are retryable PolicyCallErrors, other statuses are not. */
  async post(path: string, body: Json, signal?: AbortSignal): Promise<Json> {
    const timeout = AbortSignal.timeout(this.options.timeoutMs ?? 120_000);
    let res: Response;
    try {
      res = await this.fetch(`${this.root}${path}`, {
        method: 'POST',
        headers: this.headers,
        body: JSON.stringify(body),
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
    } catch (e) {
      if (signal?.aborted) throw e;
      if (timeout.aborted) throw new PolicyCallError('timeout', this.describe(path, 'no answer in time'));
      const cause = (e as { cause?: { code?: string } }).cause;
      throw new PolicyCallError('server_error', this.describe(path, `connection failed (${cause?.code ?? (e as Error).message})`));
    }
    let text: string;
    try {
      text = await res.text();
    } catch (e) {
      if (e instanceof ResponseTooLargeError) throw new PolicyCallError('parse_error', this.describe(path, e.message), false);
      throw new PolicyCallError('server_error', this.describe(path, `the answer broke off (${(e as Error).message})`));
    }
    if (!res.ok) {
      const s = res.status;
      const key = s === 401 || s === 403 ? ' (the server refused the API key: set TINKER_API_KEY or TRACE_RL_API_KEY, or policy.apiKeyFile)' : '';
      throw new PolicyCallError('server_error', `${this.describe(path, `HTTP ${s}: ${text}`)}${key}`, s === 408 || s === 409 || s === 429 || s >= 500);
    }
    try {
      const v = JSON.parse(text) as unknown;
      if (typeof v === 'object' && v !== null && !Array.isArray(v)) return v as Json;
    } catch {
      // reported below
    }
    throw new PolicyCallError('parse_error', this.describe(path, `the answer is not a JSON object: ${text}`));
  }

  /** Posts work that answers a future, then polls `retrieve_future` until its result (or error) is ready. */
  async submit(path: string, body: Json, signal?: AbortSignal): Promise<Json> {
    const future = await this.post(path, body, signal);
    const id = future.request_id;
    // A server may answer at once (no future); that answer is the result.
    if (typeof id !== 'string') return future;
    const deadline = Date.now() + (this.options.futureTimeoutMs ?? 30 * 60_000);
    for (let wait = 10; ; wait = Math.min(wait * 2, 1000)) {
      const r = await this.post('/api/v1/retrieve_future', { request_id: id, allow_metadata_only: false }, signal);
      if (r.type !== TRY_AGAIN) {
        if (typeof r.error === 'string')
          throw new PolicyCallError('server_error', this.describe(path, `${r.error} (${String(r.category ?? 'unknown')} error)`), r.category === 'server');
        return r;
      }
      if (Date.now() > deadline) throw new PolicyCallError('timeout', this.describe(path, `future ${id} was not ready in time`));
      await new Promise((res) => setTimeout(res, wait));
    }
  }

  async createSession(): Promise<string> {
    const r = await this.post('/api/v1/create_session', { tags: ['trace-rl'], user_metadata: null, sdk_version: 'trace-rl', type: 'create_session' });
    if (typeof r.session_id !== 'string')
      throw new PolicyCallError('parse_error', this.describe('/api/v1/create_session', 'no session_id in the answer'), false);
    this.session = r.session_id;
    return r.session_id;
  }

  /** A trainable model (LoRA of `rank` on `baseModel`); its id. */
  async createModel(baseModel: string, rank: number): Promise<string> {
    const session = this.session ?? (await this.createSession());
    const r = await this.submit('/api/v1/create_model', {
      session_id: session,
      model_seq_id: 0,
      base_model: baseModel,
      lora_config: { rank, train_unembed: true, train_mlp: true, train_attn: true },
      type: 'create_model',
    });
    if (typeof r.model_id !== 'string') throw new PolicyCallError('parse_error', this.describe('/api/v1/create_model', 'no model_id in the answer'), false);
    return r.model_id;
  }

  async sample(request: SampleRequest, signal?: AbortSignal): Promise<SampleResponse> {
    const r = await this.submit('/api/v1/asample', { ...request, type: 'sample' }, signal);
    const parsed = sampleResponseSchema.safeParse(r);
    if (!parsed.success) throw new PolicyCallError('parse_error', this.describe('/api/v1/asample', `not a sample result: ${parsed.error.issues[0]!.message}`));
    return parsed.data;
  }

  async forwardBackward(modelId: string, data: readonly Datum[], lossFn: string, config?: Record<string, number>): Promise<ForwardBackwardOutput> {
    const r = await this.submit('/api/v1/forward_backward', {
      model_id: modelId,
      seq_id: this.seq++,
      forward_backward_input: { data, loss_fn: lossFn, ...(config ? { loss_fn_config: config } : {}) },
    });
    const parsed = forwardBackwardOutputSchema.safeParse(r);
    if (!parsed.success)
      throw new PolicyCallError('parse_error', this.describe('/api/v1/forward_backward', `not a forward_backward result: ${parsed.error.issues[0]!.message}`));
    if (parsed.data.loss_fn_outputs.length !== data.length)
      throw new PolicyCallError(
        'parse_error',
        this.describe('/api/v1/forward_backward', `${parsed.data.loss_fn_outputs.length} outputs for ${data.length} datums`),
      );
    return parsed.data;
  }

  async optimStep(modelId: string, adam: AdamParams): Promise<Json> {
    return this.submit('/api/v1/optim_step', { model_id: modelId, seq_id: this.seq++, adam_params: adam, type: 'optim_step' });
  }

  /** The current weights as sampler weights; the path to sample from. */
  async saveForSampler(modelId: string, name: string): Promise<string> {
    const r = await this.submit('/api/v1/save_weights_for_sampler', { model_id: modelId, path: name, seq_id: this.seq++, type: 'save_weights_for_sampler' });
    if (typeof r.path !== 'string')
      throw new PolicyCallError(
        'parse_error',
        this.describe('/api/v1/save_weights_for_sampler', 'no path in the answer (a server that only returns a sampling session is not supported)'),
        false,
      );
    return r.path;
  }

  /** Weights and optimizer state, for a checkpoint; the path to load them from. */
  async saveState(modelId: string, name: string): Promise<string> {
    const r = await this.submit('/api/v1/save_weights', { model_id: modelId, path: name, seq_id: this.seq++, type: 'save_weights' });
    if (typeof r.path !== 'string') throw new PolicyCallError('parse_error', this.describe('/api/v1/save_weights', 'no path in the answer'), false);
    return r.path;
  }

  async loadState(modelId: string, path: string): Promise<void> {
    await this.submit('/api/v1/load_weights', { model_id: modelId, path, optimizer: true, seq_id: this.seq++, type: 'load_weights' });
  }
}
