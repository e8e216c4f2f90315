/**
 * The Tinker training API on the CPU (`trace-rl serve --tinker`): the tiny LM samples through
 * llama.cpp and trains in jax-js, behind the same endpoints and JSON the Tinker client speaks
 * (policy/tinker/wire.ts), so `train --policy tinker` runs end to end here exactly as it would
 * against hosted Tinker, SkyRL or verl_tinker.
 *
 * What this backend is and is not:
 *  - sampling from the base model (the served GGUF) or any of the last few sampler weights, each on
 *    its own llama.cpp engine (older paths answer 404); the OpenAI routes keep serving the base model;
 *  - `forward_backward` answers the datums' log-probabilities at once (one forward pass) and keeps the
 *    datums; `optim_step` computes their summed gradient (the loss of every datum at the same weights,
 *    as Tinker's accumulation does) and takes one Adam step;
 *  - losses `ppo` (symmetric clip thresholds) and `importance_sampling`; each Datum is one sequence
 *    whose `target_tokens` are its `model_input` shifted by one;
 *  - Adam's β₁, β₂ and clip norm are fixed per model once it has stepped (they are compiled in); ε is 1e-8.
 * Every call is answered with a future; `retrieve_future` waits up to a few seconds, then says try_again.
 * Bodies are JSON, and `forward_backward` may also come as the SDK's protobuf (zstd or not); results go
 * back as protobuf to a client that accepts it (body.ts). What one key holder can take is bounded
 * (`TinkerLimits`): models, datums pending per model, futures kept, sampler engines.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Hono } from 'hono';
import { z } from 'zod';
import { HttpError, readJson } from '../../http/index.ts';
import {
  adamSchema,
  createModelSchema,
  createSessionSchema,
  floats,
  inputTokens,
  loadWeightsSchema,
  modelIdSchema,
  optimStepSchema,
  retrieveSchema,
  sampleSchema,
  TRY_AGAIN,
  type Datum,
  type SampleRequest,
} from '../../policy/tinker/wire.ts';
import { provenanceProblem } from '../../policy/tinker/provenance.ts';
import type { LlamaEngine } from '../llama-engine.ts';
import { modelToGguf, type LlamaModel } from '../model.ts';
import type { TokenSequence } from '../sequence.ts';
import { DEFAULT_TINKER_LIMITS, type TinkerLimits } from './limits.ts';
import { answerResult, checkBodyType, readForwardBackward, type ProtoResult } from './body.ts';
import { Samplers, SamplersBusyError } from './samplers.ts';
import { Shares } from './shares.ts';
import { SavedFullError, SavedNameError, SavedStates } from './saved.ts';
import { addSessionRoutes } from './session-routes.ts';
import { addFuturesRoutes, SessionCompletions } from './futures-routes.ts';
import { readTrainerSnapshot, trainerSnapshot } from '../tiny-lm-policy.ts';
import { LmTrainer, NonFiniteUpdateError, type TrainRow } from '../trainer.ts';

type Json = Record<string, unknown>;

/** What the Tinker routes need of the OpenAI server's served model. */
export interface SamplerHandle {
  readonly modelName: string;
  /** Tokens a sequence may hold (the served engine's context), reported as the SDK's max_context_length. */
  readonly contextLength: number;
  /** One completion of `prompt` on `engine` with OpenAI-style sampling fields (stop strings kept in the output). */
  sample(
    engine: LlamaEngine,
    prompt: number[],
    body: { max_tokens?: number; seed?: number; temperature?: number; top_p?: number; top_k?: number; stop?: string[]; include_stop_str_in_output: true },
    signal: AbortSignal,
  ): Promise<{ ids: number[]; logprobs: number[]; finish: 'stop' | 'length'; cachedPromptTokens: number }>;
  checkTokens(ids: readonly number[]): void;
}

export interface TinkerBackendOptions {
  /** The model the trainer starts from (the served GGUF's weights). */
  model: LlamaModel;
  /** Where sampler weights and checkpoints are written, with their index (a temporary folder, or `--tinker-state-dir`). */
  workDir: string;
  /** Whether saves outlive the server (`--tinker-state-dir`): if not, a model's saves are deleted when it is unloaded. */
  keepSavesOfUnloaded?: boolean;
  /** Sent by every client as `X-API-Key`. */
  apiKey: string;
  /** Sampling temperature the trainer's log π uses (the client's policy.temperature). Default 1. */
  temperature?: number;
  /** The served GGUF (the base model's sampler). */
  baseFile: string;
  /** Loads a GGUF (the base model's, or one save_weights_for_sampler wrote) on its own engine. */
  load: (file: string) => Promise<LlamaEngine>;
  limits?: Partial<TinkerLimits>;
}

/** How long one retrieve_future waits for the result before it answers try_again. */
const RETRIEVE_WAIT_MS = 5000;

/**
 * The flags the official SDK asks for before anything else (`/api/v1/client/config`): its defaults, with
 * zstd-compressed forward_backward bodies (this server decompresses them, bounded) and plain httpx
 * (pyqwest's transport brings nothing to a loopback CPU server, and the SDK runs without it installed).
 */
const CLIENT_CONFIG = {
  pjwt_auth_enabled: false,
  credential_default_source: 'api_key',
  parallel_fwdbwd_chunks: true,
  proto_compress_fwdbwd: true,
  fwdbwd_max_chunk_len: 1024,
  fwdbwd_max_chunk_bytes_count: 5_000_000,
  use_pyqwest_transport: false,
  create_model_via_load_weights: false,
  // Samples of a sampling session are awaited with one retrieve_futures long-poll (futures-routes.ts).
  sample_use_retrieve_futures: true,
};

const saveForSamplerSchema = modelIdSchema.extend({ sampling_session_seq_id: z.number().int().nullish(), ttl_seconds: z.number().int().nullish() });

const createSamplingSessionSchema = z.looseObject({
  session_id: z.string().min(1).max(200),
  sampling_session_seq_id: z.number().int().nullish(),
  base_model: z.string().max(200).nullish(),
  model_path: z.string().max(300).nullish(),
});

/** A digest of the key, so keys of any length compare in constant time. */
const keyDigest = (key: string) => createHash('sha256').update(key).digest();

interface TrainedModel {
  id: string;
  trainer: LmTrainer;
  /** Datums since the last optim_step, with their loss's clip. */
  pending: TrainRow[];
  /** Datums and their tokens accepted since the last optim_step was accepted (counted when a request arrives, for the bounds). */
  accepted: number;
  acceptedTokens: number;
  clip?: number;
  /** forward_backward, optim_step and saves of one model run in the order they arrived. */
  queue: Promise<unknown>;
}

/** The routes that take the SDK's protobuf body besides JSON. */
const PROTOBUF_PATHS: ReadonlySet<string> = new Set(['/api/v1/forward_backward']);

type Outcome = { ok: true; value: Json } | { ok: false; error: string; category: 'user' | 'server' };

export function addTinkerRoutes(app: Hono, served: SamplerHandle, options: TinkerBackendOptions): void {
  const limits = { ...DEFAULT_TINKER_LIMITS, ...options.limits };
  const models = new Map<string, TrainedModel>();
  /** Results not yet retrieved, by request id, each owned by the model or sampling session it is for (fair shares: shares.ts). */
  const futures = new Shares<{ outcome: Promise<Outcome>; kind?: ProtoResult }>(limits.futures);
  const samplers = new Samplers(options.load, limits.samplers);
  mkdirSync(options.workDir, { recursive: true });
  const saved = new SavedStates(options.workDir, { keepPerModel: limits.savesPerModel, maxSaves: limits.saves, isLoaded: (id) => models.has(id) }, (file) =>
    samplers.retire(file),
  );
  /**
   * Sampling sessions (the SDK's `create_sampling_session`): what each samples, a saved path or the base
   * model (null), owned by the client's session or the model that saved the weights. Past the futures
   * bound, or past an owner's share of it, an old session is forgotten: the owner's own, or the
   * biggest owner's, never another run's while it holds its share or less.
   */
  const samplingSessions = new Shares<string | null>(limits.futures);
  /** Each sampling session's completed requests, for retrieve_futures (futures-routes.ts). */
  const completions = new SessionCompletions(limits.futures);
  const openSamplingSession = (path: string | null, owner: string): string => {
    const forgotten = samplingSessions.evictFor(owner);
    if (forgotten !== undefined) completions.forget(forgotten);
    const id = newId('sampling');
    samplingSessions.add(id, owner, path);
    completions.open(id);
    return id;
  };
  /** Models being created (counted when create_model arrives, for the bound). */
  let creating = 0;
  /** Calls so far, for the default names of saves. */
  let calls = 0;
  const tau = options.temperature ?? 1;
  const expectedKey = keyDigest(options.apiKey);
  // Ids are random so that a server restarted on the same --tinker-state-dir never reuses a saved path's model id.
  const newId = (prefix: string) => `${prefix}-${randomBytes(6).toString('hex')}`;

  /** A future for `work`, owned by `owner` (a model, a sampling session, a saved path): 429 past the total or the owner's share. */
  const submit = (owner: string, work: () => Promise<Json>, kind?: ProtoResult): { request_id: string } => {
    if (futures.size >= limits.futures)
      throw new HttpError(
        429,
        `${limits.futures} results are waiting to be retrieved (--tinker-max-futures); call /api/v1/retrieve_future for them first`,
        'too_many_futures',
      );
    if (futures.held(owner) >= futures.share)
      throw new HttpError(
        429,
        `${futures.held(owner)} results of ${owner} are waiting to be retrieved, its share of --tinker-max-futures (a quarter, so other runs keep room); call /api/v1/retrieve_future for them first`,
        'too_many_futures',
      );
    calls++;
    // Unguessable: whoever holds a request id may take its result, and the key is shared by every run.
    const id = `req-${randomBytes(16).toString('hex')}`;
    futures.add(id, owner, {
      kind,
      outcome: work().then(
        (value): Outcome => ({ ok: true, value }),
        (e: unknown): Outcome =>
          e instanceof HttpError
            ? { ok: false, error: e.message, category: 'user' }
            : { ok: false, error: `internal error: ${(e as Error).message}`, category: 'server' },
      ),
    });
    return { request_id: id };
  };

  const model = (id: string): TrainedModel => {
    const m = models.get(id);
    if (!m) throw new HttpError(404, `model_id ${id}: no such model here (create one with /api/v1/create_model)`, 'unknown_model', 'model_id');
    return m;
  };
  /** Runs `work` after the model's earlier calls. */
  const inOrder = (m: TrainedModel, work: () => Promise<Json>) => () => {
    const next = m.queue.then(work, work);
    m.queue = next.catch(() => undefined);
    return next;
  };

  const savedErrors = <T>(work: () => T): T => {
    try {
      return work();
    } catch (e) {
      if (e instanceof SavedNameError) throw new HttpError(400, e.message, 'invalid_path', 'path');
      if (e instanceof SavedFullError) throw new HttpError(507, e.message, 'too_many_saves');
      throw e;
    }
  };
  /**
   * A save's name, checked when the request arrives (a bad name is 400, a full server 507) and again
   * when it is written after the model's earlier calls; the work writes `bytes()` under it.
   */
  const storer = (kind: 'sampler_weights' | 'weights', modelId: string, name: string | null | undefined) => {
    const chosen = name ?? `${kind}-${calls}`;
    savedErrors(() => saved.check(kind, modelId, chosen));
    return (bytes: Uint8Array) => savedErrors(() => saved.save(kind, modelId, chosen, bytes));
  };

  // The official SDK's key header; a browser's page (it sends Origin) and bodies other than JSON and the
  // SDK's protobuf are refused, so no web page can drive training through a user's browser.
  app.use('/api/v1/*', async (c, next) => {
    if (c.req.header('origin') !== undefined) throw new HttpError(403, 'requests from web pages (with an Origin header) are refused', 'forbidden_origin');
    if (!timingSafeEqual(keyDigest(c.req.header('x-api-key') ?? ''), expectedKey))
      throw new HttpError(
        401,
        'missing or wrong X-API-Key (trace-rl serve printed the key when it started, or read it from --tinker-key-file)',
        'unauthorized',
      );
    checkBodyType(c, PROTOBUF_PATHS);
    await next();
  });

  app.get('/api/v1/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/api/v1/get_server_capabilities', (c) => c.json({ supported_models: [{ model_name: served.modelName, max_context_length: served.contextLength }] }));
  app.post('/api/v1/client/config', (c) => c.json(CLIENT_CONFIG));
  app.post('/api/v1/create_session', async (c) => {
    await readJson(c, createSessionSchema);
    return c.json({ type: 'create_session', session_id: newId('session') });
  });
  app.post('/api/v1/session_heartbeat', async (c) => c.json({ type: 'session_heartbeat' }));
  addSessionRoutes(app);
  addFuturesRoutes(app, completions);
  // The SDK reports its own events; this server keeps none.
  app.post('/api/v1/telemetry', (c) => c.json({ status: 'accepted' }));

  app.post('/api/v1/create_model', async (c) => {
    const body = await readJson(c, createModelSchema);
    if (body.base_model !== served.modelName && body.base_model !== 'default')
      throw new HttpError(400, `base_model ${body.base_model}: this server trains ${served.modelName}`, 'unknown_base_model', 'base_model');
    if (models.size + creating >= limits.models)
      throw new HttpError(
        429,
        `${limits.models} models are open on this server (--tinker-max-models); unload one (/api/v1/unload_model) or restart the runs' server`,
        'too_many_models',
      );
    creating++;
    return c.json(
      submit('create_model', async () => {
        creating--;
        const id = newId('model');
        models.set(id, {
          id,
          trainer: new LmTrainer(options.model, { temperature: tau }),
          pending: [],
          accepted: 0,
          acceptedTokens: 0,
          queue: Promise.resolve(),
        });
        return { type: 'create_model', model_id: id };
      }),
    );
  });

  app.post('/api/v1/unload_model', async (c) => {
    const body = await readJson(c, modelIdSchema);
    const m = model(body.model_id);
    models.delete(m.id);
    return c.json(
      submit(
        m.id,
        inOrder(m, async () => {
          m.trainer.dispose();
          // Without a state folder nothing can load them again after this run: they would only fill the disk.
          if (!options.keepSavesOfUnloaded) saved.dropModel(m.id);
          return { type: 'unload_model', model_id: m.id };
        }),
      ),
    );
  });

  app.post('/api/v1/create_sampling_session', async (c) => {
    const body = await readJson(c, createSamplingSessionSchema);
    const path = body.model_path ?? null;
    if (path !== null && !saved.file(path, 'sampler_weights'))
      throw new HttpError(404, `model_path ${path}: no sampler weights of that name here`, 'unknown_path', 'model_path');
    if (path === null) checkBaseModel(body.base_model);
    return c.json({ type: 'create_sampling_session', sampling_session_id: openSamplingSession(path, `session:${body.session_id}`) });
  });

  app.post('/api/v1/get_info', async (c) => {
    const body = await readJson(c, modelIdSchema);
    model(body.model_id);
    return c.json({
      type: 'get_info',
      model_id: body.model_id,
      model_data: { arch: 'llama', model_name: served.modelName, tokenizer_id: null },
      is_lora: false,
    });
  });

  const checkBaseModel = (name: string | null | undefined) => {
    if (name != null && name !== served.modelName && name !== 'default')
      throw new HttpError(400, `base_model ${name}: this server samples ${served.modelName}`, 'unknown_base_model', 'base_model');
  };

  app.post('/api/v1/asample', async (c) => {
    const body = await readJson(c, sampleSchema);
    let path = body.model_path ?? null;
    if (body.sampling_session_id != null) {
      const session = samplingSessions.get(body.sampling_session_id);
      if (session === undefined)
        throw new HttpError(
          404,
          `sampling_session_id ${body.sampling_session_id}: no such sampling session here`,
          'unknown_sampling_session',
          'sampling_session_id',
        );
      path ??= session;
    }
    const file = path === null ? options.baseFile : saved.file(path, 'sampler_weights');
    if (!file)
      throw new HttpError(
        404,
        `model_path ${path}: no sampler weights of that name here (kept: each model's last ${limits.savesPerModel})`,
        'unknown_path',
        'model_path',
      );
    if (path === null) checkBaseModel(body.base_model);
    const p = body.sampling_params;
    if (Array.isArray(p.stop) && (p.stop as unknown[]).some((s) => typeof s === 'number'))
      throw new HttpError(400, 'sampling_params.stop: this server stops on strings; send the stop texts', 'unsupported_stop', 'sampling_params.stop');
    refuseUnsupportedAsks(body);
    const prompt = inputTokens(body.prompt);
    if (prompt.length === 0) throw new HttpError(400, 'prompt: no tokens; send at least one (the sequence to continue)', 'invalid_prompt', 'prompt');
    served.checkTokens(prompt);
    const stop = p.stop == null ? [] : typeof p.stop === 'string' ? [p.stop] : (p.stop as string[]);
    let slot;
    try {
      slot = samplers.reserve(file);
    } catch (e) {
      if (e instanceof SamplersBusyError) throw new HttpError(429, e.message, 'samplers_busy');
      throw e;
    }
    const sampler = slot;
    const future = submit(
      `sampling:${body.sampling_session_id ?? path ?? 'base'}`,
      () =>
        sampler.run(async (engine) => {
          const sequences = [];
          let cached = 0;
          for (let i = 0; i < body.num_samples; i++) {
            const r = await served.sample(
              engine,
              prompt,
              {
                ...(p.max_tokens != null ? { max_tokens: p.max_tokens } : {}),
                ...(p.seed != null ? { seed: p.seed + i } : {}),
                temperature: p.temperature,
                top_p: p.top_p,
                top_k: p.top_k === -1 ? 0 : p.top_k,
                stop,
                include_stop_str_in_output: true,
              },
              AbortSignal.timeout(10 * 60_000),
            );
            sequences.push({ tokens: r.ids, logprobs: r.logprobs, stop_reason: r.finish });
            cached += r.cachedPromptTokens;
          }
          return { type: 'sample', sequences, prompt_cache_hit_tokens: cached };
        }),
      'sample',
    );
    // A sample of a sampling session is reported to that session's retrieve_futures poll when it completes.
    if (body.sampling_session_id != null)
      completions.follow(body.sampling_session_id, body.seq_id ?? 0, future.request_id, futures.get(future.request_id)!.outcome);
    // SDK 0.26+ refuses a sample whose future names no sequences; the request id is random, so these are unique.
    return c.json({ ...future, sample_sequence_ids: Array.from({ length: body.num_samples }, (_, i) => `${future.request_id}:${i}`) });
  });

  app.post('/api/v1/forward_backward', async (c) => {
    const body = await readForwardBackward(c, { decodedBytes: limits.decodedBytes, callTokens: limits.callTokens });
    const m = model(body.model_id);
    const input = body.forward_backward_input;
    const clip = lossClip(input.loss_fn, input.loss_fn_config ?? undefined);
    const rows = input.data.map((d, i) => datumRow(d, i));
    for (const r of rows) served.checkTokens(r.seq.ids);
    if (!body.forward_only && m.accepted + rows.length > limits.pendingDatums)
      throw new HttpError(
        429,
        `model ${m.id} holds ${m.accepted} datums since its last optim_step and ${rows.length} more would pass ${limits.pendingDatums} (--tinker-max-pending-datums); call optim_step first`,
        'too_many_pending_datums',
      );
    // Input tokens, as the body's bound counts them (each row's ids add the last target).
    const tokens = rows.reduce((n, r) => n + r.seq.ids.length - 1, 0);
    if (!body.forward_only && m.acceptedTokens + tokens > limits.callTokens)
      throw new HttpError(
        429,
        `model ${m.id} holds ${m.acceptedTokens} tokens since its last optim_step and ${tokens} more would pass ${limits.callTokens} (--tinker-max-call-tokens, one optim_step's work); call optim_step first`,
        'too_many_pending_tokens',
      );
    if (!body.forward_only) {
      m.accepted += rows.length;
      m.acceptedTokens += tokens;
    }
    return c.json(
      submit(
        m.id,
        inOrder(m, async () => {
          if (!body.forward_only && m.clip !== undefined && m.clip !== clip)
            throw new HttpError(
              400,
              'forward_backward: one optimizer step takes one loss; call optim_step before changing loss_fn or its clip',
              'mixed_losses',
            );
          const now = await m.trainer.logprobsYielding(rows.map((r) => r.seq));
          let loss = 0;
          const outputs = rows.map((r, i) => {
            const lp = now[i]!.slice(1);
            r.advantages!.slice(1).forEach((a, t) => {
              if (a === 0) return;
              const ratio = Math.exp(lp[t]! - r.seq.logprobs[t + 1]!);
              loss -= Math.min(ratio * a, Math.min(Math.max(ratio, 1 - clip), 1 + clip) * a);
            });
            return { logprobs: floats(lp) };
          });
          if (!body.forward_only) {
            m.pending.push(...rows);
            m.clip = clip;
          }
          return { loss_fn_output_type: 'TensorData', loss_fn_outputs: outputs, metrics: { 'loss:sum': loss } };
        }),
        'forward_backward',
      ),
    );
  });

  app.post('/api/v1/optim_step', async (c) => {
    const body = await readJson(c, optimStepSchema);
    const m = model(body.model_id);
    const adam = adamSchema.parse(body.adam_params);
    if (adam.weight_decay !== 0)
      throw new HttpError(400, 'adam_params.weight_decay: this server has none; send 0', 'unsupported_adam', 'adam_params.weight_decay');
    if (Math.abs(adam.eps - 1e-8) > 1e-12)
      throw new HttpError(400, 'adam_params.eps: this server’s Adam uses 1e-8; send 1e-8', 'unsupported_adam', 'adam_params.eps');
    if (adam.learning_rate > MAX_LEARNING_RATE)
      throw new HttpError(
        400,
        `adam_params.learning_rate: ${adam.learning_rate} is more than ${MAX_LEARNING_RATE} (Adam moves each weight by about the learning rate a step)`,
        'unsupported_adam',
        'adam_params.learning_rate',
      );
    m.accepted = 0;
    m.acceptedTokens = 0;
    return c.json(
      submit(
        m.id,
        inOrder(m, async () => {
          const norm = adam.grad_clip_norm === 0 ? Infinity : adam.grad_clip_norm;
          const o = m.trainer.opts;
          if (o.beta1 !== adam.beta1 || o.beta2 !== adam.beta2 || o.maxGradNorm !== norm) {
            if (m.trainer.updates > 0)
              throw new HttpError(
                400,
                `adam_params: β₁ ${o.beta1}, β₂ ${o.beta2} and clip norm ${o.maxGradNorm} are fixed once a model has stepped`,
                'unsupported_adam',
              );
            const weights = m.trainer.weights();
            m.trainer.dispose();
            m.trainer = new LmTrainer(
              { config: options.model.config, weights },
              {
                temperature: tau,
                beta1: adam.beta1,
                beta2: adam.beta2,
                maxGradNorm: norm,
              },
            );
          }
          const rows = m.pending;
          const clip = m.clip ?? 0.2;
          m.pending = [];
          m.clip = undefined;
          // Advantages arrive already scaled (Tinker's losses are sums): divisor 1.
          let s;
          try {
            s = rows.length ? await m.trainer.step('ppo', rows, adam.learning_rate, clip, 1) : undefined;
          } catch (e) {
            if (e instanceof NonFiniteUpdateError)
              throw new HttpError(400, `optim_step: ${e.message}; send datums with smaller advantages`, 'non_finite_update');
            throw e;
          }
          return { type: 'optim_step', metrics: { tokens: s?.tokens ?? 0, clip_fraction: s?.clipFraction ?? 0, approx_kl: s?.approxKl ?? 0 } };
        }),
      ),
    );
  });

  app.post('/api/v1/save_weights_for_sampler', async (c) => {
    const body = await readJson(c, saveForSamplerSchema);
    const m = model(body.model_id);
    const store = storer('sampler_weights', m.id, body.path);
    return c.json(
      submit(
        m.id,
        inOrder(m, async () => {
          const path = store(modelToGguf({ ...options.model, weights: m.trainer.weights() }));
          // Without a name the SDK wants a sampling session on the new weights (save_weights_and_get_sampling_client).
          if (body.path == null && body.sampling_session_seq_id != null)
            return { type: 'save_weights_for_sampler', path, sampling_session_id: openSamplingSession(path, m.id) };
          return { type: 'save_weights_for_sampler', path };
        }),
      ),
    );
  });

  app.post('/api/v1/save_weights', async (c) => {
    const body = await readJson(c, modelIdSchema);
    const m = model(body.model_id);
    const store = storer('weights', m.id, body.path);
    return c.json(
      submit(
        m.id,
        inOrder(m, async () => {
          const path = store(trainerSnapshot(options.model, m.trainer));
          return { type: 'save_weights', path };
        }),
      ),
    );
  });

  app.post('/api/v1/load_weights', async (c) => {
    const body = await readJson(c, loadWeightsSchema);
    const m = model(body.model_id);
    const file = saved.file(body.path, 'weights');
    if (!file)
      throw new HttpError(
        404,
        `path ${body.path}: no saved weights of that name here (kept: each model's last ${limits.savesPerModel}; without --tinker-state-dir they are gone after a restart)`,
        'unknown_path',
        'path',
      );
    return c.json(
      submit(
        m.id,
        inOrder(m, async () => {
          const { weights, optimizer } = readTrainerSnapshot(new Uint8Array(readFileSync(file)));
          m.trainer.setState(weights, body.optimizer ? optimizer : undefined);
          return { type: 'load_weights', path: body.path };
        }),
      ),
    );
  });

  app.post('/api/v1/retrieve_future', async (c) => {
    const body = await readJson(c, retrieveSchema);
    const f = futures.get(body.request_id);
    if (!f) throw new HttpError(404, `request_id ${body.request_id}: no such request, or its result was already retrieved`, 'unknown_request', 'request_id');
    const wait = new AbortController();
    const gone = c.req.raw.signal;
    const out = await Promise.race([f.outcome, sleep(RETRIEVE_WAIT_MS, undefined, { signal: AbortSignal.any([wait.signal, gone]) }).catch(() => undefined)]);
    wait.abort();
    if (!out) return c.json({ type: TRY_AGAIN, request_id: body.request_id, queue_state: 'active' });
    // A client that gave up on this poll (its own deadline) never reads the answer: the result stays for its next poll.
    if (gone.aborted) return c.json({ type: TRY_AGAIN, request_id: body.request_id, queue_state: 'active' });
    futures.delete(body.request_id);
    return out.ok ? answerResult(c, out.value, f.kind) : c.json({ error: out.error, category: out.category });
  });
}

/** The largest Adam learning rate taken: past it a step only throws the weights away. */
const MAX_LEARNING_RATE = 1;
/** The largest |advantage| taken: a PPO loss sums advantage × ratio in float32, whose range ends near 3.4e38. */
const MAX_ADVANTAGE = 1e6;
/** The largest ppo clip ε taken (thresholds 1 − ε and 1 + ε). */
const MAX_CLIP = 10;

/** The clip ε of a loss: ppo's thresholds must be 1 − ε and 1 + ε; importance_sampling does not clip. */
function lossClip(lossFn: string, config: Record<string, number> | undefined): number {
  if (lossFn === 'importance_sampling') return 1e9;
  if (lossFn !== 'ppo') throw new HttpError(400, `loss_fn ${lossFn}: this server trains with ppo or importance_sampling`, 'unsupported_loss', 'loss_fn');
  const low = config?.clip_low_threshold ?? 0.8;
  const high = config?.clip_high_threshold ?? 1.2;
  if (!(low < 1 && high > 1 && high - 1 <= MAX_CLIP) || Math.abs(1 - low - (high - 1)) > 1e-9)
    throw new HttpError(
      400,
      `loss_fn_config: clip thresholds ${low} and ${high} must be 1 − ε and 1 + ε for one ε of at most ${MAX_CLIP}`,
      'unsupported_loss',
      'loss_fn_config',
    );
  return high - 1;
}

const required = (d: Datum, i: number, key: string, length: number): number[] => {
  const t = d.loss_fn_inputs[key];
  if (!t) throw new HttpError(400, `data[${i}].loss_fn_inputs.${key}: missing`, 'invalid_datum', 'data');
  if (t.data.length !== length)
    throw new HttpError(400, `data[${i}].loss_fn_inputs.${key}: ${t.data.length} values for ${length} input tokens`, 'invalid_datum', 'data');
  return t.data;
};

/**
 * Sample asks of SDK 0.26+ this engine cannot answer: refused as the client's mistake, rather than
 * answered without what was asked (the SDK would hand its caller None for them).
 */
function refuseUnsupportedAsks(body: SampleRequest): void {
  const asks: Array<[keyof SampleRequest, boolean]> = [
    ['prompt_logprobs', body.prompt_logprobs === true],
    ['topk_prompt_logprobs', (body.topk_prompt_logprobs ?? 0) > 0],
    ['topk_sample_logprobs', (body.topk_sample_logprobs ?? 0) > 0],
    ['target_prompt_logprobs', body.target_prompt_logprobs != null],
    ['prompt_alt_tokens_k', (body.prompt_alt_tokens_k ?? 0) > 0],
  ];
  const asked = asks.find(([, on]) => on);
  if (asked)
    throw new HttpError(
      400,
      `${asked[0]}: this server answers sampled tokens and their log-probabilities only; leave it unset`,
      'unsupported_sample_field',
      asked[0],
    );
}

/** A Datum as a trainer row: the whole sequence, the sampler's log-probabilities and the advantages, both at the token they score. */
function datumRow(d: Datum, i: number): TrainRow {
  const tokens = inputTokens(d.model_input);
  if (tokens.length === 0) throw new HttpError(400, `data[${i}].model_input: no tokens`, 'invalid_datum', 'data');
  // Provenance is checked (paired, each list tiling its field) but not used: no forward-pass feature here reads it.
  const provenance = provenanceProblem(d, tokens.length, d.loss_fn_inputs.target_tokens?.data.length ?? 0);
  if (provenance) throw new HttpError(400, `data[${i}]: ${provenance}`, 'invalid_datum', `data[${i}].model_input_spans`);
  const targets = required(d, i, 'target_tokens', tokens.length);
  const old = required(d, i, 'logprobs', tokens.length);
  const adv = required(d, i, 'advantages', tokens.length);
  for (let t = 0; t + 1 < tokens.length; t++)
    if (targets[t] !== tokens[t + 1])
      throw new HttpError(
        400,
        `data[${i}]: target_tokens[${t}] is not model_input[${t + 1}]; this server trains on one sequence, its targets the input shifted by one`,
        'invalid_datum',
        'data',
      );
  const ids = [...tokens, targets.at(-1)!];
  if (!ids.every((x) => Number.isInteger(x) && x >= 0))
    throw new HttpError(400, `data[${i}].target_tokens: token ids are non-negative integers`, 'invalid_datum', 'data');
  // The protobuf wire carries float32 NaN and ±∞ (JSON cannot); any of them would turn the weights into NaN.
  if (!old.every((x) => Number.isFinite(x) && x <= 1e-3))
    throw new HttpError(400, `data[${i}].loss_fn_inputs.logprobs: log-probabilities are finite and at most 0`, 'invalid_datum', 'data');
  if (!adv.every((x) => Number.isFinite(x) && Math.abs(x) <= MAX_ADVANTAGE))
    throw new HttpError(400, `data[${i}].loss_fn_inputs.advantages: finite values of at most ${MAX_ADVANTAGE} in size`, 'invalid_datum', 'data');
  const advantages = [0, ...adv];
  const seq: TokenSequence = { ids, mask: advantages.map((a) => (a !== 0 ? 1 : 0)), logprobs: [0, ...old], turn: ids.map(() => -1) };
  return { seq, advantages };
}
