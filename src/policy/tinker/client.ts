/**
 * A client of the Tinker training API over plain HTTP (wire.ts): a session, one trainable model, its
 * futures, sampling, forward_backward, optim_step, and weights for the sampler and for checkpoints.
 * The API key goes in `X-API-Key`, as the official SDK sends it, to the configured address only (no
 * redirect is followed); it never appears in an error message, in any encoding (util/redact.ts).
 * Every answer is bounded by what its call asked (answer-bounds.ts) and checked against it.
 */
import { escapeControl } from '../../util/escape-control.ts';
import { readBoundedBody } from '../../util/bounded-body.ts';
import { redactSecret } from '../../util/redact.ts';
import { PolicyCallError } from '../errors.ts';
import {
  AnswerBoundError,
  CAPABILITIES_BYTES,
  checkForwardBackward,
  checkSample,
  sampleSequenceIds,
  ERROR_BODY_BYTES,
  forwardBackwardAnswerBytes,
  sampleAnswerBytes,
  SMALL_ANSWER_BYTES,
} from './answer-bounds.ts';
import { capabilitiesSchema, modelInfoSchema, type Capabilities, type ModelInfo } from './engine.ts';
import { PROTOBUF, ProtoBodyError } from './proto-codec.ts';
import { decodeResult, WireChoice, type ProtoResult } from './wire-choice.ts';
import { SessionFutures } from './session-futures.ts';
import {
  forwardBackwardOutputSchema,
  sampleResponseSchema,
  SDK_WIRE_VERSION,
  TRY_AGAIN,
  type AdamParams,
  type FinishReason,
  type Datum,
  type ForwardBackwardOutput,
  type ForwardBackwardRequest,
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
  /** One retrieve_future poll's limit (the SDK's: 45 s); a poll the engine holds longer is made again. */
  retrieveTimeoutMs?: number;
  /** How often the session is kept alive (the SDK's period: 10 s). */
  heartbeatMs?: number;
  /** One forward_backward request's datums at most, and its estimated bytes (the SDK's chunking: 1024, 5 MB). */
  maxChunkDatums?: number;
  maxChunkBytes?: number;
  /**
   * A future's polls that may fail in a row (5xx, a dropped connection) before the call fails, and the
   * first backoff (doubled each time, at most 5 s): engine.retry's defaults, 5 from 400 ms.
   */
  pollAttempts?: number;
  pollBackoffMs?: number;
}

/** What one request may be answered: its body's bytes at most, and for a sample or forward_backward, the protobuf result asked for. */
interface AnswerLimit {
  maxBytes: number;
  accept?: ProtoResult;
}
const SMALL: AnswerLimit = { maxBytes: SMALL_ANSWER_BYTES };

/** A sampling session: its id, the seq_id of its next sample, and its retrieve_futures poll. */
interface SamplingSession {
  id: string;
  seq: number;
  futures: SessionFutures;
}
/** Sampling sessions kept at once: the current weights' and a few before (a sample may still be on them). */
const KEPT_SAMPLING_SESSIONS = 4;

/** A call the engine answered with an HTTP error status (the status is kept: 408 means "not yet"). */
export class TinkerHttpError extends PolicyCallError {
  override name = 'TinkerHttpError';
  constructor(
    readonly status: number,
    message: string,
    retryable: boolean,
  ) {
    super('server_error', message, retryable);
  }
}

/** An answer too long to show is cut here: a server's error page can be anything. */
const MAX_MESSAGE_CHARS = 400;
/** What to do about an HTTP status, said in the error (the statuses an engine answers a client's mistake or its own with). */
const STATUS_HINTS: Record<number, string> = {
  401: 'the server refused the API key: set TINKER_API_KEY or TRACE_RL_API_KEY, or policy.apiKeyFile',
  403: 'the server refused the API key: set TINKER_API_KEY or TRACE_RL_API_KEY, or policy.apiKeyFile',
  404: 'the engine does not know this model, weights path or request: if it restarted, its models and saved states may be gone',
  413: 'too large for the engine: lower policy.contextLength or policy.maxTokensPerTurn',
};

export class TinkerClient {
  readonly root: string;
  private readonly headers: Record<string, string>;
  private session?: Promise<string>;
  /** Models created in this session (create_model's model_seq_id counts from 0, as the SDK's). */
  private models = 0;
  /** Each model's last request seq_id (the SDK's count from 1 per training client). */
  private readonly seqIds = new Map<string, number>();
  private heartbeat?: ReturnType<typeof setInterval>;
  /** forward_backward as JSON or the SDK's protobuf (zstd or not), by what the engine says (wire-choice.ts). */
  private readonly wire = new WireChoice(() => this.clientConfig());
  /** Sampling sessions by the weights they sample (used when the engine asks for retrieve_futures). */
  private readonly samplingSessions = new Map<string, Promise<SamplingSession>>();
  private samplingSessionCount = 0;

  constructor(private readonly options: TinkerClientOptions) {
    this.root = options.baseURL.replace(/\/+$/, '').replace(/\/api\/v1$/, '');
    this.headers = { 'content-type': 'application/json', ...(options.apiKey ? { 'x-api-key': options.apiKey } : {}) };
  }

  /** `message` (which may quote the engine) with the key blanked out in any encoding, on one line, cut to a readable length, naming the endpoint. */
  private describe(path: string, message: string): string {
    const text = escapeControl(this.redact(message));
    return `${this.root}${path}: ${text.length > MAX_MESSAGE_CHARS ? `${text.slice(0, MAX_MESSAGE_CHARS)}…` : text}`;
  }

  /** An engine-supplied string without the API key in any form (raw, URL, JSON, hex, base64), before it is printed or stored. */
  redact(text: string): string {
    return redactSecret(text, this.options.apiKey, '[API key]');
  }

  /** One POST; transport failures and 408/429/5xx are retryable PolicyCallErrors, other statuses are not. */
  async post(path: string, body: Json, signal?: AbortSignal, timeoutMs?: number, limit: AnswerLimit = SMALL): Promise<Json> {
    return this.request(path, { method: 'POST', body: JSON.stringify(body), ...limit }, signal, timeoutMs);
  }

  async get(path: string, signal?: AbortSignal, limit: AnswerLimit = SMALL): Promise<Json> {
    return this.request(path, { method: 'GET', ...limit }, signal);
  }

  /**
   * One request. `headers` are added to the client's (a protobuf body's content type); with `accept`, a
   * protobuf answer is asked for and read as that result (a JSON answer is read as JSON); an answer of
   * more than `maxBytes` is refused. A redirect is refused, not followed: fetch drops `Authorization`
   * across origins but not `X-API-Key`, so following one would hand the key to whatever address the
   * engine names.
   */
  private async request(
    path: string,
    init: { method: 'GET' | 'POST'; body?: string | Uint8Array; headers?: Record<string, string> } & AnswerLimit,
    signal?: AbortSignal,
    timeoutMs?: number,
  ): Promise<Json> {
    const timeout = AbortSignal.timeout(timeoutMs ?? this.options.timeoutMs ?? 120_000);
    let res: Response;
    try {
      res = await fetch(`${this.root}${path}`, {
        method: init.method,
        body: init.body as BodyInit | undefined,
        headers: { ...this.headers, ...init.headers, ...(init.accept ? { accept: `${PROTOBUF}, application/json` } : {}) },
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
        redirect: 'manual',
      });
    } catch (e) {
      if (signal?.aborted) throw e;
      if (timeout.aborted) throw new PolicyCallError('timeout', this.describe(path, 'no answer in time (is the engine overloaded or stuck?)'));
      const cause = (e as { cause?: { code?: string } }).cause;
      throw new PolicyCallError(
        'server_error',
        this.describe(path, `connection failed (${cause?.code ?? (e as Error).message}); is the engine running there? (policy.baseUrl, --base-url)`),
      );
    }
    if (res.status >= 300 && res.status < 400) {
      await res.body?.cancel().catch(() => undefined);
      const to = res.headers.get('location');
      throw new TinkerHttpError(
        res.status,
        this.describe(
          path,
          `HTTP ${res.status}, a redirect${to ? ` to ${to}` : ''}: engine calls follow no redirect (the API key would go along); set policy.baseUrl (--base-url) to the address the engine answers at`,
        ),
        false,
      );
    }
    let text: string;
    try {
      const maxBytes = res.ok ? init.maxBytes : ERROR_BODY_BYTES;
      const bytes = await readBoundedBody(res, {
        maxBytes,
        cut: !res.ok,
        refuse: (n, declared) =>
          new AnswerBoundError(`${n} bytes ${declared ? 'declared' : 'sent so far'}, more than the ${maxBytes} this call's answer may take`),
      });
      if (res.ok && init.accept && (res.headers.get('content-type') ?? '').toLowerCase().startsWith(PROTOBUF)) {
        try {
          return decodeResult(init.accept, bytes);
        } catch (e) {
          if (e instanceof ProtoBodyError) throw new ProtoBodyError(`a protobuf ${init.accept.kind} result that does not decode: ${e.message}`);
          throw e;
        }
      }
      text = new TextDecoder().decode(bytes);
    } catch (e) {
      if (e instanceof ProtoBodyError) throw new PolicyCallError('parse_error', this.describe(path, e.message), false);
      if (e instanceof AnswerBoundError) throw this.refusal(path, e);
      throw new PolicyCallError('server_error', this.describe(path, `the answer broke off (${(e as Error).message})`));
    }
    if (!res.ok) {
      const s = res.status;
      const hint = STATUS_HINTS[s] ? ` (${STATUS_HINTS[s]})` : '';
      throw new TinkerHttpError(s, `${this.describe(path, `HTTP ${s}: ${text}`)}${hint}`, s === 408 || s === 409 || s === 429 || s >= 500);
    }
    try {
      const v = JSON.parse(text) as unknown;
      if (typeof v === 'object' && v !== null && !Array.isArray(v)) return v as Json;
    } catch {
      // reported below
    }
    throw new PolicyCallError('parse_error', this.describe(path, `the answer is not a JSON object: ${text}`));
  }

  /** An answer that is not what the call asked, as the engine's error (retrying the same call would get the same). */
  private refusal(path: string, e: AnswerBoundError): PolicyCallError {
    return new PolicyCallError('server_error', this.describe(path, `the engine's answer is refused: ${e.message}; check the engine`), false);
  }

  /** Posts work that answers a future, then polls `retrieve_future` until its result (or error) is ready. */
  async submit(path: string, body: Json, signal?: AbortSignal, limit: AnswerLimit = SMALL): Promise<Json> {
    return this.result(path, await this.post(path, body, signal), signal, limit);
  }

  /** The engine's client config (the official SDK's first call), or undefined when it has none (404: an engine before the protobuf wire). */
  async clientConfig(): Promise<Json | undefined> {
    try {
      return await this.post('/api/v1/client/config', { sdk_version: SDK_WIRE_VERSION }, undefined, 30_000);
    } catch (e) {
      if (e instanceof TinkerHttpError && (e.status === 404 || e.status === 405)) return undefined;
      throw e;
    }
  }

  /** One forward_backward chunk in the engine's encoding; a protobuf body it refuses goes again as JSON (remembered). */
  private async postForwardBackward(path: string, request: ForwardBackwardRequest): Promise<Json> {
    const encoding = await this.wire.encoding();
    const { body, headers } = await this.wire.body(request, encoding);
    try {
      return await this.request(path, { method: 'POST', body, headers, ...SMALL });
    } catch (e) {
      if (e instanceof TinkerHttpError && this.wire.refused(encoding, e.status)) return this.postForwardBackward(path, request);
      throw e;
    }
  }

  /**
   * The result of a future a call answered (an answer without `request_id` is the result itself). The
   * engine's "not yet" comes as `try_again`, as HTTP 408 (SkyRL after holding a poll 300 s; the SDK
   * polls again), or as a poll held past our own limit, and a 429 says "busy": all polled again until
   * `futureTimeoutMs`. A 5xx or a dropped connection is an engine failing, retried like a call
   * (`pollAttempts` in a row, with backoff) and then the call's failure in one line: an engine that
   * answers every poll with 500 is not waited on for half an hour.
   */
  async result(path: string, future: Json, signal?: AbortSignal, limit: AnswerLimit = SMALL): Promise<Json> {
    const id = future.request_id;
    if (typeof id !== 'string') return future;
    const waitLimit = this.options.futureTimeoutMs ?? 30 * 60_000;
    const deadline = Date.now() + waitLimit;
    const attempts = this.options.pollAttempts ?? 5;
    for (let wait = 10, failures = 0, busy = 0; ;) {
      let r: Json;
      try {
        r = await this.request(
          '/api/v1/retrieve_future',
          { method: 'POST', body: JSON.stringify({ request_id: id, allow_metadata_only: false }), ...limit },
          signal,
          this.options.retrieveTimeoutMs ?? 45_000,
        );
      } catch (e) {
        if (!(e instanceof PolicyCallError) || !e.retryable || signal?.aborted) throw e;
        if (Date.now() > deadline)
          throw new PolicyCallError(
            'timeout',
            this.describe(path, `future ${id} was not ready in ${Math.round(waitLimit / 1000)} s (last poll: ${e.message})`),
          );
        const notYet = e.code === 'timeout' || (e instanceof TinkerHttpError && (e.status === 408 || e.status === 429));
        if (notYet) {
          if (e instanceof TinkerHttpError && e.status === 429) await delay(Math.min(250 * 2 ** busy++, 30_000));
          continue;
        }
        if (++failures >= attempts)
          throw new PolicyCallError(e.code, `${e.message} (future ${id}: ${failures} polls failed in a row, the last one here)`, e.retryable);
        await delay(Math.min((this.options.pollBackoffMs ?? 400) * 2 ** (failures - 1), 5000));
        continue;
      }
      failures = 0;
      busy = 0;
      if (r.type !== TRY_AGAIN) {
        if (typeof r.error === 'string')
          throw new PolicyCallError('server_error', this.describe(path, `${r.error} (${String(r.category ?? 'unknown')} error)`), r.category === 'server');
        return r;
      }
      if (Date.now() > deadline) throw new PolicyCallError('timeout', this.describe(path, `future ${id} was not ready in ${Math.round(waitLimit / 1000)} s`));
      await delay(wait);
      wait = Math.min(wait * 2, 1000);
    }
  }

  /** The engine's models and their context lengths (`get_server_capabilities`). */
  async capabilities(): Promise<Capabilities> {
    const path = '/api/v1/get_server_capabilities';
    const parsed = capabilitiesSchema.safeParse(await this.get(path, undefined, { maxBytes: CAPABILITIES_BYTES }));
    if (!parsed.success) throw new PolicyCallError('parse_error', this.describe(path, `not a capabilities answer: ${parsed.error.issues[0]!.message}`), false);
    return parsed.data;
  }

  /** What the engine says a created model is (LoRA or full weights). */
  async modelInfo(modelId: string): Promise<ModelInfo> {
    const path = '/api/v1/get_info';
    const parsed = modelInfoSchema.safeParse(await this.post(path, { model_id: modelId, type: 'get_info' }));
    if (!parsed.success) throw new PolicyCallError('parse_error', this.describe(path, `not a model info answer: ${parsed.error.issues[0]!.message}`), false);
    return parsed.data;
  }

  /**
   * The context length an OpenAI-style server's `/tokenize` reports (`max_model_len`: vLLM, trace-rl
   * serve), for an engine whose Tinker capabilities do not say; undefined when it does not answer one.
   */
  async tokenizeLimit(): Promise<number | undefined> {
    try {
      const r = await this.post('/tokenize', { prompt: '', content: '' }, undefined, 10_000);
      const n = r.max_model_len;
      return typeof n === 'number' && Number.isInteger(n) && n > 0 ? n : undefined;
    } catch (e) {
      if (e instanceof PolicyCallError) return undefined;
      throw e;
    }
  }

  /** Stops the session's heartbeat (the run is over). */
  close(): void {
    clearInterval(this.heartbeat);
    this.heartbeat = undefined;
  }

  /**
   * Tells the engine the session is over and how (`POST /api/v1/sessions/{id}/finish`: success, errored,
   * interrupted), then stops the heartbeat. Best effort and short: an engine without the route (404), or
   * one that does not answer in 5 s, is left to time the session out as before; it never fails the run.
   */
  async finish(reason: FinishReason): Promise<void> {
    const session = this.session;
    this.close();
    if (!session) return;
    try {
      const id = await session;
      await this.post(`/api/v1/sessions/${encodeURIComponent(id)}/finish`, { reason: { type: reason } }, undefined, 5000);
    } catch {
      // Not the run's failure: the session ends by its missed heartbeats anyway.
    }
  }

  /**
   * The sampling session of the weights at `modelPath` (or the base model), created once
   * (`create_sampling_session`, numbered from 0 per session as the SDK numbers them); the last few are
   * kept (the policy samples new weights each step).
   */
  private samplingSession(modelPath: string | null, baseModel: string | null): Promise<SamplingSession> {
    const key = modelPath ?? `base:${baseModel ?? ''}`;
    let session = this.samplingSessions.get(key);
    if (!session) {
      session = this.openSamplingSession(modelPath, baseModel).catch((e: unknown) => {
        this.samplingSessions.delete(key);
        throw e;
      });
      this.samplingSessions.set(key, session);
      if (this.samplingSessions.size > KEPT_SAMPLING_SESSIONS) this.samplingSessions.delete(this.samplingSessions.keys().next().value!);
    }
    return session;
  }

  private async openSamplingSession(modelPath: string | null, baseModel: string | null): Promise<SamplingSession> {
    const path = '/api/v1/create_sampling_session';
    const r = await this.post(path, {
      session_id: await this.createSession(),
      sampling_session_seq_id: this.samplingSessionCount++,
      ...(modelPath !== null ? { model_path: modelPath } : { base_model: baseModel }),
      type: 'create_sampling_session',
    });
    if (typeof r.sampling_session_id !== 'string' || r.sampling_session_id.length > 256)
      throw new PolicyCallError('parse_error', this.describe(path, 'no sampling_session_id in the answer'), false);
    const id = r.sampling_session_id;
    const futures = new SessionFutures({
      poll: (cursor) =>
        this.post(
          '/api/v1/retrieve_futures',
          { target: { type: 'sampling_session', sampling_session_id: id, cloned_sampler_id: 0 }, prev_cursor: cursor, timeout: 30 },
          undefined,
          this.options.retrieveTimeoutMs ?? 45_000,
        ),
      refuse: (message) => new PolicyCallError('server_error', this.describe('/api/v1/retrieve_futures', `the engine's answer is refused: ${message}`), false),
      attempts: this.options.pollAttempts ?? 5,
      backoffMs: this.options.pollBackoffMs ?? 400,
    });
    return { id, seq: 0, futures };
  }

  private nextSeq(modelId: string): number {
    const n = (this.seqIds.get(modelId) ?? 0) + 1;
    this.seqIds.set(modelId, n);
    return n;
  }

  /** The session (one per client, created once however many calls ask at the same time), kept alive by a heartbeat. */
  createSession(): Promise<string> {
    this.session ??= this.openSession().catch((e: unknown) => {
      this.session = undefined;
      throw e;
    });
    return this.session;
  }

  private async openSession(): Promise<string> {
    const r = await this.post('/api/v1/create_session', { tags: ['trace-rl'], user_metadata: null, sdk_version: SDK_WIRE_VERSION, type: 'create_session' });
    if (typeof r.session_id !== 'string')
      throw new PolicyCallError('parse_error', this.describe('/api/v1/create_session', 'no session_id in the answer'), false);
    const id = r.session_id;
    // A missed beat is not the run's failure (the engine's next answer says whether it is gone): ignored.
    this.heartbeat = setInterval(
      () => void this.post('/api/v1/session_heartbeat', { session_id: id, type: 'session_heartbeat' }, undefined, 10_000).catch(() => undefined),
      this.options.heartbeatMs ?? 10_000,
    );
    this.heartbeat.unref();
    return id;
  }

  /** A trainable model (LoRA of `rank` on `baseModel`); its id. */
  async createModel(baseModel: string, rank: number): Promise<string> {
    const session = await this.createSession();
    const r = await this.submit('/api/v1/create_model', {
      session_id: session,
      model_seq_id: this.models++,
      base_model: baseModel,
      lora_config: { rank, train_unembed: true, train_mlp: true, train_attn: true },
      type: 'create_model',
    });
    if (typeof r.model_id !== 'string') throw new PolicyCallError('parse_error', this.describe('/api/v1/create_model', 'no model_id in the answer'), false);
    return r.model_id;
  }

  /**
   * A sample, refused unless it is what was asked: num_samples sequences of at most max_tokens,
   * log-probabilities at most 0. An engine whose client config says `sample_use_retrieve_futures` gets it
   * as the SDK sends it then: through a sampling session of the weights asked for, with the session's
   * next seq_id, its completion awaited by the session's one retrieve_futures poll.
   */
  async sample(request: SampleRequest, signal?: AbortSignal): Promise<SampleResponse> {
    const path = '/api/v1/asample';
    const limit = { maxBytes: sampleAnswerBytes(request), accept: { kind: 'sample' as const, numSamples: request.num_samples ?? 1 } };
    let future: Json;
    if (await this.wire.samplesBySession()) {
      const { model_path, base_model, ...rest } = request;
      const session = await this.samplingSession(model_path ?? null, base_model ?? null);
      future = await this.post(path, { ...rest, sampling_session_id: session.id, seq_id: session.seq++, type: 'sample' }, signal);
      if (typeof future.request_id === 'string') await session.futures.wait(future.request_id, signal);
    } else {
      future = await this.post(path, { ...request, type: 'sample' }, signal);
    }
    const r = await this.result(path, future, signal, limit);
    const parsed = sampleResponseSchema.safeParse(r);
    if (!parsed.success) throw new PolicyCallError('parse_error', this.describe(path, `not a sample result: ${parsed.error.issues[0]!.message}`));
    try {
      checkSample(request, parsed.data);
      // As the SDK does: the future's ids, fixed when the sample was submitted, are its sequences' ids.
      const ids = typeof future.request_id === 'string' ? sampleSequenceIds(future, request.num_samples ?? 1) : undefined;
      if (ids) parsed.data.sequences.forEach((s, i) => (s.sequence_id = ids[i]));
    } catch (e) {
      if (e instanceof AnswerBoundError) throw this.refusal(path, e);
      throw e;
    }
    return parsed.data;
  }

  /**
   * forward_backward in chunks, as the SDK sends it (at most `maxChunkDatums` datums and about
   * `maxChunkBytes` of tokens and tensors each, every chunk its own seq_id): all are posted in order,
   * then their results are read and joined in order.
   */
  async forwardBackward(modelId: string, data: readonly Datum[], lossFn: string, config?: Record<string, number>): Promise<ForwardBackwardOutput> {
    const path = '/api/v1/forward_backward';
    const chunks = chunkDatums(data, this.options.maxChunkDatums ?? 1024, this.options.maxChunkBytes ?? 5_000_000);
    const futures: Json[] = [];
    for (const chunk of chunks)
      futures.push(
        await this.postForwardBackward(path, {
          model_id: modelId,
          seq_id: this.nextSeq(modelId),
          forward_backward_input: { data: chunk, loss_fn: lossFn, ...(config ? { loss_fn_config: config } : {}) },
        }),
      );
    const outputs = await Promise.all(
      futures.map(async (future, i) => {
        const chunk = chunks[i]!;
        const limit = { maxBytes: forwardBackwardAnswerBytes(chunk), accept: { kind: 'forward_backward' as const, datums: chunk.length } };
        const parsed = forwardBackwardOutputSchema.safeParse(await this.result(path, future, undefined, limit));
        if (!parsed.success) throw new PolicyCallError('parse_error', this.describe(path, `not a forward_backward result: ${parsed.error.issues[0]!.message}`));
        try {
          checkForwardBackward(chunk, parsed.data);
        } catch (e) {
          if (e instanceof AnswerBoundError) throw this.refusal(path, e);
          throw e;
        }
        return parsed.data;
      }),
    );
    return joinOutputs(outputs);
  }

  async optimStep(modelId: string, adam: AdamParams): Promise<Json> {
    return this.submit('/api/v1/optim_step', { model_id: modelId, seq_id: this.nextSeq(modelId), adam_params: adam, type: 'optim_step' });
  }

  /** The current weights as sampler weights; the path to sample from. */
  async saveForSampler(modelId: string, name: string): Promise<string> {
    const r = await this.submit('/api/v1/save_weights_for_sampler', {
      model_id: modelId,
      path: name,
      seq_id: this.nextSeq(modelId),
      type: 'save_weights_for_sampler',
    });
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
    const r = await this.submit('/api/v1/save_weights', { model_id: modelId, path: name, seq_id: this.nextSeq(modelId), type: 'save_weights' });
    if (typeof r.path !== 'string') throw new PolicyCallError('parse_error', this.describe('/api/v1/save_weights', 'no path in the answer'), false);
    return r.path;
  }

  async loadState(modelId: string, path: string): Promise<void> {
    await this.submit('/api/v1/load_weights', { model_id: modelId, path, optimizer: true, seq_id: this.nextSeq(modelId), type: 'load_weights' });
  }
}

const delay = (ms: number) => new Promise((res) => setTimeout(res, ms));

/** The SDK's estimate of a datum's size on the wire: 4 bytes a token, each tensor's values at their dtype's width. */
function datumBytes(d: Datum): number {
  const tokens = d.model_input.chunks.reduce((n, c) => n + c.tokens.length, 0);
  return tokens * 4 + Object.values(d.loss_fn_inputs).reduce((n, t) => n + t.data.length * (t.dtype === 'int64' ? 8 : 4), 0);
}

/** Datums in order, cut where a chunk would pass `maxDatums` or `maxBytes` (a datum larger than that goes alone). */
export function chunkDatums(data: readonly Datum[], maxDatums: number, maxBytes: number): Datum[][] {
  const chunks: Datum[][] = [];
  let current: Datum[] = [];
  let bytes = 0;
  for (const d of data) {
    const b = datumBytes(d);
    if (current.length > 0 && (current.length === maxDatums || bytes + b > maxBytes)) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push(d);
    bytes += b;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

/** Chunks' results as one: outputs in order; metrics by the reduction their name ends with (`loss:sum`), weighted by datums for means. */
function joinOutputs(parts: readonly ForwardBackwardOutput[]): ForwardBackwardOutput {
  if (parts.length === 1) return parts[0]!;
  const metrics: Record<string, number> = {};
  const total = parts.reduce((n, p) => n + p.loss_fn_outputs.length, 0);
  for (const key of Object.keys(parts[0]?.metrics ?? {})) {
    const values = parts.map((p) => p.metrics[key]);
    if (values.some((v) => v === undefined)) continue;
    const vs = values as number[];
    const reduction = key.slice(key.lastIndexOf(':') + 1);
    if (reduction === 'sum') metrics[key] = vs.reduce((a, b) => a + b, 0);
    else if (reduction === 'mean') metrics[key] = vs.reduce((a, v, i) => a + (v * parts[i]!.loss_fn_outputs.length) / total, 0);
    else if (reduction === 'min') metrics[key] = Math.min(...vs);
    else if (reduction === 'max') metrics[key] = Math.max(...vs);
  }
  return { ...parts[0]!, loss_fn_outputs: parts.flatMap((p) => p.loss_fn_outputs), metrics };
}
