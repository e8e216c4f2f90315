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
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Context, Hono } from 'hono';
import { HttpError, readJson } from '../http/index.ts';
import {
  adamSchema,
  createModelSchema,
  createSessionSchema,
  floats,
  forwardBackwardSchema,
  inputTokens,
  loadWeightsSchema,
  modelIdSchema,
  optimStepSchema,
  retrieveSchema,
  sampleSchema,
  TRY_AGAIN,
  type Datum,
} from '../policy/tinker/wire.ts';
import type { LlamaEngine } from './llama-engine.ts';
import { modelToGguf, type LlamaModel } from './model.ts';
import type { TokenSequence } from './sequence.ts';
import { readTrainerSnapshot, trainerSnapshot } from './tiny-lm-policy.ts';
import { LmTrainer, type TrainRow } from './trainer.ts';

type Json = Record<string, unknown>;

/** What the Tinker routes need of the OpenAI server's served model. */
export interface SamplerHandle {
  readonly modelName: string;
  /** One completion of `prompt` on `engine` with OpenAI-style sampling fields (stop strings kept in the output). */
  sample(
    engine: LlamaEngine,
    prompt: number[],
    body: { max_tokens?: number; seed?: number; temperature?: number; top_p?: number; top_k?: number; stop?: string[]; include_stop_str_in_output: true },
    signal: AbortSignal,
  ): Promise<{ ids: number[]; logprobs: number[]; finish: 'stop' | 'length' }>;
  checkTokens(ids: readonly number[]): void;
}

export interface TinkerBackendOptions {
  /** The model the trainer starts from (the served GGUF's weights). */
  model: LlamaModel;
  /** Where sampler weights and checkpoints are written (owned by the backend). */
  workDir: string;
  /** Sent by every client as `X-API-Key`. */
  apiKey: string;
  /** Sampling temperature the trainer's log π uses (the client's policy.temperature). Default 1. */
  temperature?: number;
  /** The served GGUF (the base model's sampler). */
  baseFile: string;
  /** Loads a GGUF (the base model's, or one save_weights_for_sampler wrote) on its own engine. */
  load: (file: string) => Promise<LlamaEngine>;
}

/** Unretrieved futures at most: past it, new work is refused (429) until clients collect their results. */
const MAX_FUTURES = 4096;
/** How long one retrieve_future waits for the result before it answers try_again. */
const RETRIEVE_WAIT_MS = 5000;
/** Saved weights kept per kind; older files are deleted (their paths then answer 404). */
const KEEP_SAVED = 8;
const NAME = /^[A-Za-z0-9._-]{1,64}$/;

interface TrainedModel {
  id: string;
  trainer: LmTrainer;
  /** Datums since the last optim_step, with their loss's clip. */
  pending: TrainRow[];
  clip?: number;
  /** forward_backward, optim_step and saves of one model run in the order they arrived. */
  queue: Promise<unknown>;
}

type Outcome = { ok: true; value: Json } | { ok: false; error: string; category: 'user' | 'server' };

export function addTinkerRoutes(app: Hono, served: SamplerHandle, options: TinkerBackendOptions): void {
  const models = new Map<string, TrainedModel>();
  const futures = new Map<string, Promise<Outcome>>();
  const saved = new Map<string, string>();
  const savedOrder: Record<'sampler_weights' | 'weights', string[]> = { sampler_weights: [], weights: [] };
  const samplers = new Samplers(options.load);
  let sessions = 0;
  let requests = 0;
  mkdirSync(options.workDir, { recursive: true });
  const tau = options.temperature ?? 1;

  const submit = (work: () => Promise<Json>): { request_id: string } => {
    if (futures.size >= MAX_FUTURES)
      throw new HttpError(429, `${MAX_FUTURES} results are waiting to be retrieved; call /api/v1/retrieve_future for them first`, 'too_many_futures');
    const id = `req-${requests++}`;
    futures.set(
      id,
      work().then(
        (value): Outcome => ({ ok: true, value }),
        (e: unknown): Outcome =>
          e instanceof HttpError
            ? { ok: false, error: e.message, category: 'user' }
            : { ok: false, error: `internal error: ${(e as Error).message}`, category: 'server' },
      ),
    );
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

  const store = (kind: 'sampler_weights' | 'weights', modelId: string, name: string | null | undefined, bytes: Uint8Array): { path: string; file: string } => {
    const label = name ?? `${kind}-${requests}`;
    if (!NAME.test(label)) throw new HttpError(400, `path ${label}: a name of letters, digits, '.', '_' or '-' (at most 64)`, 'invalid_path', 'path');
    const path = `tinker://${modelId}/${kind}/${label}`;
    const file = join(options.workDir, `${kind}-${randomBytes(6).toString('hex')}.${kind === 'weights' ? 'snapshot' : 'gguf'}`);
    writeFileSync(file, bytes, { flag: 'wx' });
    const old = saved.get(path);
    if (old) {
      samplers.retire(old);
      rmSync(old, { force: true });
    }
    saved.set(path, file);
    const order = savedOrder[kind].filter((p) => p !== path);
    order.push(path);
    while (order.length > KEEP_SAVED) {
      const gone = order.shift()!;
      samplers.retire(saved.get(gone)!);
      rmSync(saved.get(gone)!, { force: true });
      saved.delete(gone);
    }
    savedOrder[kind] = order;
    return { path, file };
  };

  // The official SDK's key header; a browser's page (it sends Origin) and non-JSON bodies are refused,
  // so no web page can drive training through a user's browser.
  app.use('/api/v1/*', async (c, next) => {
    if (c.req.header('origin') !== undefined) throw new HttpError(403, 'requests from web pages (with an Origin header) are refused', 'forbidden_origin');
    if (c.req.header('x-api-key') !== options.apiKey)
      throw new HttpError(
        401,
        'missing or wrong X-API-Key (trace-rl serve printed the key when it started, or read it from --tinker-key-file)',
        'unauthorized',
      );
    if (c.req.method === 'POST' && !/^application\/json\b/i.test(c.req.header('content-type') ?? ''))
      throw new HttpError(415, 'send a JSON body (content-type: application/json)', 'unsupported_media_type');
    await next();
  });

  app.get('/api/v1/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/api/v1/get_server_capabilities', (c) => c.json({ supported_models: [{ model_name: served.modelName }] }));
  app.post('/api/v1/create_session', async (c) => {
    await readJson(c, createSessionSchema);
    return c.json({ type: 'create_session', session_id: `session-${sessions++}` });
  });
  app.post('/api/v1/session_heartbeat', async (c) => c.json({ type: 'session_heartbeat' }));

  app.post('/api/v1/create_model', async (c) => {
    const body = await readJson(c, createModelSchema);
    if (body.base_model !== served.modelName && body.base_model !== 'default')
      throw new HttpError(400, `base_model ${body.base_model}: this server trains ${served.modelName}`, 'unknown_base_model', 'base_model');
    return c.json(
      submit(async () => {
        const id = `model-${models.size}`;
        models.set(id, { id, trainer: new LmTrainer(options.model, { temperature: tau }), pending: [], queue: Promise.resolve() });
        return { type: 'create_model', model_id: id };
      }),
    );
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

  app.post('/api/v1/asample', async (c) => {
    const body = await readJson(c, sampleSchema);
    const path = body.model_path ?? body.sampling_session_id ?? null;
    if (path !== null && !saved.has(path))
      throw new HttpError(404, `model_path ${path}: no sampler weights of that name here (kept: the last ${KEEP_SAVED})`, 'unknown_path', 'model_path');
    if (path === null && body.base_model != null && body.base_model !== served.modelName && body.base_model !== 'default')
      throw new HttpError(400, `base_model ${body.base_model}: this server samples ${served.modelName}`, 'unknown_base_model', 'base_model');
    const p = body.sampling_params;
    if (Array.isArray(p.stop) && (p.stop as unknown[]).some((s) => typeof s === 'number'))
      throw new HttpError(400, 'sampling_params.stop: this server stops on strings; send the stop texts', 'unsupported_stop', 'sampling_params.stop');
    const prompt = inputTokens(body.prompt);
    served.checkTokens(prompt);
    const stop = p.stop == null ? [] : typeof p.stop === 'string' ? [p.stop] : (p.stop as string[]);
    return c.json(
      submit(async () => {
        const sequences = [];
        for (let i = 0; i < body.num_samples; i++) {
          const r = await samplers.use(path === null ? options.baseFile : saved.get(path)!, (engine) =>
            served.sample(
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
            ),
          );
          sequences.push({ tokens: r.ids, logprobs: r.logprobs, stop_reason: r.finish });
        }
        return { type: 'sample', sequences };
      }),
    );
  });

  app.post('/api/v1/forward_backward', async (c) => {
    const body = await readJson(c, forwardBackwardSchema);
    const m = model(body.model_id);
    const input = body.forward_backward_input;
    const clip = lossClip(input.loss_fn, input.loss_fn_config ?? undefined);
    const rows = input.data.map((d, i) => datumRow(d, i));
    for (const r of rows) served.checkTokens(r.seq.ids);
    return c.json(
      submit(
        inOrder(m, async () => {
          if (m.clip !== undefined && m.clip !== clip)
            throw new HttpError(
              400,
              'forward_backward: one optimizer step takes one loss; call optim_step before changing loss_fn or its clip',
              'mixed_losses',
            );
          const now = m.trainer.logprobs(rows.map((r) => r.seq));
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
          m.pending.push(...rows);
          m.clip = clip;
          return { loss_fn_output_type: 'TensorData', loss_fn_outputs: outputs, metrics: { 'loss:sum': loss } };
        }),
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
    return c.json(
      submit(
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
            m.trainer = new LmTrainer({ config: options.model.config, weights }, { temperature: tau, beta1: adam.beta1, beta2: adam.beta2, maxGradNorm: norm });
          }
          const rows = m.pending;
          const clip = m.clip ?? 0.2;
          m.pending = [];
          m.clip = undefined;
          // Advantages arrive already scaled (Tinker's losses are sums): divisor 1.
          const s = rows.length ? await m.trainer.step('ppo', rows, adam.learning_rate, clip, 1) : undefined;
          return { type: 'optim_step', metrics: { tokens: s?.tokens ?? 0, clip_fraction: s?.clipFraction ?? 0, approx_kl: s?.approxKl ?? 0 } };
        }),
      ),
    );
  });

  app.post('/api/v1/save_weights_for_sampler', async (c) => {
    const body = await readJson(c, modelIdSchema);
    const m = model(body.model_id);
    return c.json(
      submit(
        inOrder(m, async () => {
          const { path } = store('sampler_weights', m.id, body.path, modelToGguf({ ...options.model, weights: m.trainer.weights() }));
          return { type: 'save_weights_for_sampler', path };
        }),
      ),
    );
  });

  app.post('/api/v1/save_weights', async (c) => {
    const body = await readJson(c, modelIdSchema);
    const m = model(body.model_id);
    return c.json(
      submit(
        inOrder(m, async () => {
          const { path } = store('weights', m.id, body.path, trainerSnapshot(options.model, m.trainer));
          return { type: 'save_weights', path };
        }),
      ),
    );
  });

  app.post('/api/v1/load_weights', async (c) => {
    const body = await readJson(c, loadWeightsSchema);
    const m = model(body.model_id);
    const file = saved.get(body.path);
    if (!file || !body.path.includes('/weights/'))
      throw new HttpError(404, `path ${body.path}: no saved weights of that name here (kept: the last ${KEEP_SAVED})`, 'unknown_path', 'path');
    return c.json(
      submit(
        inOrder(m, async () => {
          const { readFileSync } = await import('node:fs');
          const { weights, optimizer } = readTrainerSnapshot(new Uint8Array(readFileSync(file)));
          m.trainer.setState(weights, body.optimizer ? optimizer : undefined);
          return { type: 'load_weights', path: body.path };
        }),
      ),
    );
  });

  app.post('/api/v1/retrieve_future', async (c) => {
    const body = await readJson(c, retrieveSchema);
    const p = futures.get(body.request_id);
    if (!p) throw new HttpError(404, `request_id ${body.request_id}: no such request, or its result was already retrieved`, 'unknown_request', 'request_id');
    const wait = new AbortController();
    const out = await Promise.race([p, sleep(RETRIEVE_WAIT_MS, undefined, { signal: wait.signal }).catch(() => undefined)]);
    wait.abort();
    if (!out) return c.json({ type: TRY_AGAIN, request_id: body.request_id, queue_state: 'active' });
    futures.delete(body.request_id);
    return c.json(out.ok ? out.value : { error: out.error, category: out.category });
  });
}

/** The clip ε of a loss: ppo's thresholds must be 1 − ε and 1 + ε; importance_sampling does not clip. */
function lossClip(lossFn: string, config: Record<string, number> | undefined): number {
  if (lossFn === 'importance_sampling') return 1e9;
  if (lossFn !== 'ppo') throw new HttpError(400, `loss_fn ${lossFn}: this server trains with ppo or importance_sampling`, 'unsupported_loss', 'loss_fn');
  const low = config?.clip_low_threshold ?? 0.8;
  const high = config?.clip_high_threshold ?? 1.2;
  if (!(low < 1 && high > 1) || Math.abs(1 - low - (high - 1)) > 1e-9)
    throw new HttpError(400, `loss_fn_config: clip thresholds ${low} and ${high} must be 1 − ε and 1 + ε for one ε`, 'unsupported_loss', 'loss_fn_config');
  return high - 1;
}

const required = (d: Datum, i: number, key: string, length: number): number[] => {
  const t = d.loss_fn_inputs[key];
  if (!t) throw new HttpError(400, `data[${i}].loss_fn_inputs.${key}: missing`, 'invalid_datum', 'data');
  if (t.data.length !== length)
    throw new HttpError(400, `data[${i}].loss_fn_inputs.${key}: ${t.data.length} values for ${length} input tokens`, 'invalid_datum', 'data');
  return t.data;
};

/** A Datum as a trainer row: the whole sequence, the sampler's log-probabilities and the advantages, both at the token they score. */
function datumRow(d: Datum, i: number): TrainRow {
  const tokens = inputTokens(d.model_input);
  if (tokens.length === 0) throw new HttpError(400, `data[${i}].model_input: no tokens`, 'invalid_datum', 'data');
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
  const advantages = [0, ...adv];
  const seq: TokenSequence = { ids, mask: advantages.map((a) => (a !== 0 ? 1 : 0)), logprobs: [0, ...old], turn: ids.map(() => -1) };
  return { seq, advantages };
}

/** One llama.cpp engine per weights file sampled from, loaded on first use; a retired one is freed when its last sample ends. */
class Samplers {
  private readonly engines = new Map<string, { engine: Promise<LlamaEngine>; users: number; retired: boolean }>();
  constructor(private readonly load: (file: string) => Promise<LlamaEngine>) {}

  async use<T>(file: string, work: (engine: LlamaEngine) => Promise<T>): Promise<T> {
    let e = this.engines.get(file);
    if (!e) this.engines.set(file, (e = { engine: this.load(file), users: 0, retired: false }));
    e.users++;
    try {
      return await work(await e.engine);
    } finally {
      e.users--;
      if (e.retired && e.users === 0) await (await e.engine).dispose();
    }
  }

  retire(file: string): void {
    const e = this.engines.get(file);
    if (!e) return;
    this.engines.delete(file);
    e.retired = true;
    if (e.users === 0) void e.engine.then((x) => x.dispose());
  }
}
