/**
 * An OpenAI-compatible HTTP server (hono) in front of llama.cpp: `POST /v1/completions`,
 * `POST /v1/chat/completions`, `GET /v1/models`. Non-streaming. Per-token log-probabilities come back
 * in the OpenAI shapes (completions `logprobs.tokens/token_logprobs/text_offset`, chat
 * `logprobs.content[i].{token, logprob, bytes}`), plus two vLLM extras the rollout engine's
 * OpenAI policy uses: `return_token_ids` (generated ids in `choices[0].token_ids`) and
 * `include_stop_str_in_output`. A completions prompt may be a string or an array of token ids
 * (token-exact continuations). Stop strings end generation and are cut from the text (OpenAI),
 * unless `include_stop_str_in_output`. Chat prompts use the GGUF's chat template when it has one
 * (node-llama-cpp resolves it), else a plain `role: content` transcript.
 */
import { randomBytes } from 'node:crypto';
import type { Context, Hono } from 'hono';
import { LlamaText, resolveChatWrapper, type ChatHistoryItem, type ChatWrapper } from 'node-llama-cpp';
import { z } from 'zod';
import {
  controlGuard,
  createServerApp,
  HttpError,
  listen,
  readJson,
  tooLarge,
  type ControlAccess,
  type ListenOptions,
  type RunningServer,
} from '../http/index.ts';
import { ContextOverflowError, type LlamaEngine } from './llama-engine.ts';
import { addTinkerRoutes, type TinkerBackendOptions } from './tinker-server/routes.ts';

export type { RunningServer };

const sampling = {
  model: z.string().optional(),
  max_tokens: z
    .number()
    .int()
    .min(1)
    .max(1 << 20)
    .optional(),
  max_completion_tokens: z.number().int().min(1).optional(),
  temperature: z.number().min(0).max(2).optional(),
  top_p: z.number().gt(0).max(1).optional(),
  top_k: z.number().int().min(-1).optional(),
  min_p: z.number().min(0).max(1).optional(),
  seed: z.number().int().optional(),
  stop: z.union([z.string(), z.array(z.string()).max(16)]).nullish(),
  n: z.literal(1).optional(),
  stream: z.literal(false).optional(),
  return_token_ids: z.boolean().optional(),
  include_stop_str_in_output: z.boolean().optional(),
};

const completionSchema = z.looseObject({
  ...sampling,
  prompt: z.union([z.string(), z.array(z.number().int().min(0)).min(1)]),
  logprobs: z.number().int().min(0).max(20).nullish(),
  echo: z.literal(false).optional(),
});

const chatSchema = z.looseObject({
  ...sampling,
  messages: z.array(z.looseObject({ role: z.enum(['system', 'developer', 'user', 'assistant']), content: z.union([z.string(), z.null()]) })).min(1),
  logprobs: z.boolean().nullish(),
  top_logprobs: z.number().int().min(0).max(20).nullish(),
});

export interface OpenAIServerOptions {
  /** Name reported by /v1/models and echoed in responses. */
  modelName: string;
  /** Default max_tokens when a request gives none. Default 256. */
  defaultMaxTokens?: number;
  /** Seconds since the epoch for the responses' `created` field (the CLI passes the wall clock). Default 0. */
  clock?: () => number;
  /**
   * Enables `POST /reload {"model": FILE}`: loads new weights (an external trainer's GGUF) and swaps
   * them in; requests already running finish on the old model, which is then disposed.
   */
  reload?: (file: string) => Promise<LlamaEngine>;
  /** Who may call `/reload` (token, hosts; http/control.ts); required with `reload`. */
  control?: ControlAccess;
  /** Request limits (docs/reliability.md); unset fields take their defaults. */
  limits?: Partial<OpenAIServerLimits>;
  /** Also serve the Tinker training API on these weights (`trace-rl serve --tinker`; tinker-server/routes.ts). */
  tinker?: TinkerBackendOptions;
}

/** What one request may ask of the server; the CLI flags set them. */
export interface OpenAIServerLimits {
  /** Largest request body in bytes (`--max-body-bytes`, default 1 MiB). */
  maxBodyBytes: number;
  /** Most prompt characters, checked before tokenising (`--max-prompt-chars`, default 65,536; chat: all messages together). */
  maxPromptChars: number;
  /** Most prompt tokens after tokenising (`--max-prompt-tokens`, default: the context length). */
  maxPromptTokens?: number;
}

export const DEFAULT_OPENAI_LIMITS: OpenAIServerLimits = { maxBodyBytes: 1 << 20, maxPromptChars: 65_536 };

const tokenizeSchema = z.looseObject({
  model: z.string().optional(),
  /** vLLM / SGLang spell the text `prompt`, llama.cpp `content`. */
  prompt: z.string().optional(),
  content: z.string().optional(),
  add_special_tokens: z.boolean().optional(),
  add_special: z.boolean().optional(),
});
const detokenizeSchema = z.looseObject({ model: z.string().optional(), tokens: z.array(z.number().int().min(0)) });

interface Completion {
  text: string;
  ids: number[];
  logprobs: number[];
  pieces: string[];
  finish: 'stop' | 'length';
  promptTokens: number;
  /** Prompt tokens taken from the engine's KV cache rather than evaluated (a shared prefix re-used). */
  cachedPromptTokens: number;
}

type SamplingBody = z.infer<z.ZodObject<typeof sampling>>;

/**
 * The served weights and what every route needs of them: the engine (`/reload` swaps it; each request
 * keeps the engine it started with, and a replaced engine is freed when its last request ends), the
 * prompt limits, generation with stop strings, and response ids.
 */
class ServedModel {
  private current: LlamaEngine;
  private readonly inFlight = new Map<LlamaEngine, number>();
  private readonly retired = new Set<LlamaEngine>();
  private wrapper: ChatWrapper | undefined;
  /** Seed of the next request that gives none (requests differ, and a restarted server repeats them). */
  private nextSeed = 0;
  // Response ids: a random prefix per server and a counter per response, so no two responses of one
  // server share an id (they were `cmpl-<seed counter>`, which seeded requests never advanced).
  private readonly idPrefix = randomBytes(4).toString('hex');
  private responses = 0;

  constructor(
    first: LlamaEngine,
    readonly options: OpenAIServerOptions,
    readonly limits: OpenAIServerLimits,
  ) {
    this.current = first;
  }

  get engine(): LlamaEngine {
    return this.current;
  }

  /** Bounds a prompt before it is tokenised (characters). */
  checkChars(chars: number): void {
    if (chars > this.limits.maxPromptChars)
      throw tooLarge(`a prompt of ${chars.toLocaleString('en')} characters`, this.limits.maxPromptChars, 'characters', '--max-prompt-chars', 'prompt_too_long');
  }

  /** Bounds a prompt after it is tokenised (tokens, ids in the served model's vocabulary). */
  checkTokens(ids: readonly number[]): void {
    const { contextSize, vocabSize: vocab } = this.current;
    const maxTokens = Math.min(this.limits.maxPromptTokens ?? contextSize, contextSize);
    if (ids.length > maxTokens)
      throw tooLarge(
        `a prompt of ${ids.length.toLocaleString('en')} tokens`,
        maxTokens,
        'tokens',
        this.limits.maxPromptTokens === undefined ? 'the context length, --context' : '--max-prompt-tokens',
        'prompt_too_many_tokens',
      );
    const bad = ids.findIndex((id) => id >= vocab);
    if (bad >= 0)
      throw new HttpError(400, `prompt[${bad}]: token id ${ids[bad]} is outside the vocabulary (0 … ${vocab - 1})`, 'token_out_of_vocabulary', 'prompt');
  }

  withBos(ids: number[]): number[] {
    const t = this.current.model.tokens;
    return t.bos !== null && t.shouldPrependBosToken && ids[0] !== t.bos ? [t.bos, ...ids] : ids;
  }

  /** The chat template, resolved once from the first model that served a chat request. */
  chatWrapper(): ChatWrapper {
    return (this.wrapper ??= resolveChatWrapper(this.current.model));
  }

  responseId(kind: 'cmpl' | 'chatcmpl'): string {
    return `${kind}-${this.idPrefix}-${this.responses++}`;
  }

  now(): number {
    return Math.floor(this.options.clock?.() ?? 0);
  }

  /** Swaps in the weights of `model` (a GGUF); the old engine is freed once no request uses it. */
  async reload(reload: (model: string) => Promise<LlamaEngine>, model: string): Promise<void> {
    const next = await reload(model);
    const old = this.current;
    this.current = next;
    if ((this.inFlight.get(old) ?? 0) === 0) await old.dispose();
    else this.retired.add(old);
  }

  /** One completion of `prompt` on the engine serving now. */
  async complete(prompt: number[], body: SamplingBody, signal: AbortSignal): Promise<Completion> {
    const e = this.current;
    this.inFlight.set(e, (this.inFlight.get(e) ?? 0) + 1);
    try {
      return await this.generate(e, prompt, body, signal);
    } finally {
      const left = this.inFlight.get(e)! - 1;
      this.inFlight.set(e, left);
      if (left === 0 && this.retired.delete(e)) await e.dispose();
    }
  }

  /** One completion on an engine the caller owns (the Tinker routes' sampler weights). */
  completeOn(engine: LlamaEngine, prompt: number[], body: SamplingBody, signal: AbortSignal): Promise<Completion> {
    return this.generate(engine, prompt, body, signal);
  }

  private async generate(engine: LlamaEngine, prompt: number[], body: SamplingBody, signal: AbortSignal): Promise<Completion> {
    const model = engine.model;
    const stops = body.stop == null ? [] : typeof body.stop === 'string' ? [body.stop] : body.stop;
    const pieces: string[] = [];
    let text = '';
    let cut: number | undefined;
    const out = await engine.generate(prompt, {
      maxTokens: body.max_completion_tokens ?? body.max_tokens ?? this.options.defaultMaxTokens ?? 256,
      stop: [],
      seed: body.seed ?? this.nextSeed++,
      greedy: body.temperature === 0,
      sampling: { temperature: body.temperature, topP: body.top_p, topK: body.top_k === -1 ? 0 : body.top_k, minP: body.min_p },
      signal,
      until: (ids) => {
        const piece = model.detokenize([ids.at(-1)!] as never, false, ids.slice(0, -1) as never);
        pieces.push(piece);
        text += piece;
        for (const s of stops) {
          const at = text.indexOf(s, Math.max(0, text.length - piece.length - s.length));
          if (at >= 0) cut = at + (body.include_stop_str_in_output ? s.length : 0);
        }
        return cut !== undefined;
      },
    });
    // The last token was not passed to `until` when generation ended on EOS or length.
    if (pieces.length < out.ids.length) {
      const last = out.ids.at(-1)!;
      const piece = last === model.tokens.eos ? '' : model.detokenize([last] as never, false, out.ids.slice(0, -1) as never);
      pieces.push(piece);
      text += piece;
    }
    return {
      text: cut === undefined ? text : text.slice(0, cut),
      ids: out.ids,
      logprobs: out.logprobs,
      pieces,
      finish: out.stop === 'length' ? 'length' : 'stop',
      promptTokens: prompt.length,
      cachedPromptTokens: out.ids.length > 0 ? prompt.length - out.promptTokens : 0,
    };
  }
}

const usage = (r: Completion) => ({ prompt_tokens: r.promptTokens, completion_tokens: r.ids.length, total_tokens: r.promptTokens + r.ids.length });

// vLLM / SGLang / llama.cpp tokenizer routes: clients build token-id prompts with the model's own ids.
function tokenizeRoute(m: ServedModel) {
  return async (c: Context) => {
    const body = await readJson(c, tokenizeSchema);
    const text = body.prompt ?? body.content ?? '';
    m.checkChars(text.length);
    const special = body.add_special_tokens ?? body.add_special ?? true;
    const ids = [...m.engine.model.tokenize(text, true)] as number[];
    const tokens = special ? m.withBos(ids) : ids;
    return c.json({ tokens, count: tokens.length, max_model_len: m.engine.contextSize });
  };
}

function detokenizeRoute(m: ServedModel) {
  return async (c: Context) => {
    const body = await readJson(c, detokenizeSchema);
    const vocab = m.engine.vocabSize;
    const bad = body.tokens.findIndex((id) => id >= vocab);
    if (bad >= 0)
      throw new HttpError(
        400,
        `tokens[${bad}]: token id ${body.tokens[bad]} is outside the vocabulary (0 … ${vocab - 1})`,
        'token_out_of_vocabulary',
        'tokens',
      );
    const text = m.engine.model.detokenize(body.tokens as never, false);
    return c.json({ prompt: text, content: text });
  };
}

function reloadRoute(m: ServedModel) {
  return async (c: Context) => {
    const reload = m.options.reload;
    if (!reload) throw new HttpError(404, 'this server was started without --allow-reload', 'reload_disabled');
    const body = await readJson(c, z.looseObject({ model: z.string().min(1) }));
    await m.reload(reload, body.model);
    return c.json({ ok: true, model: body.model });
  };
}

function completionsRoute(m: ServedModel) {
  return async (c: Context) => {
    const body = await readJson(c, completionSchema);
    m.checkChars(typeof body.prompt === 'string' ? body.prompt.length : 0);
    const prompt = typeof body.prompt === 'string' ? m.withBos([...m.engine.model.tokenize(body.prompt, true)]) : body.prompt;
    m.checkTokens(prompt);
    const r = await m.complete(prompt, body, c.req.raw.signal);
    const offsets: number[] = [];
    let at = 0;
    for (const p of r.pieces) {
      offsets.push(at);
      at += p.length;
    }
    const logprobs = body.logprobs == null ? null : { tokens: r.pieces, token_logprobs: r.logprobs, top_logprobs: null, text_offset: offsets };
    const choice = {
      index: 0,
      text: r.text,
      finish_reason: r.finish,
      logprobs,
      ...(body.return_token_ids ? { token_ids: r.ids, prompt_token_ids: prompt } : {}),
    };
    return c.json({ id: m.responseId('cmpl'), object: 'text_completion', created: m.now(), model: m.options.modelName, choices: [choice], usage: usage(r) });
  };
}

function chatRoute(m: ServedModel) {
  return async (c: Context) => {
    const body = await readJson(c, chatSchema);
    m.checkChars(body.messages.reduce((n, msg) => n + (msg.content?.length ?? 0), 0));
    const model = m.engine.model;
    const wrapper = m.chatWrapper();
    const history: ChatHistoryItem[] = body.messages.map((msg) =>
      msg.role === 'assistant'
        ? { type: 'model', response: [msg.content ?? ''] }
        : msg.role === 'user'
          ? { type: 'user', text: msg.content ?? '' }
          : { type: 'system', text: msg.content ?? '' },
    );
    if (history.at(-1)?.type !== 'model') history.push({ type: 'model', response: [] });
    const state = wrapper.generateContextState({ chatHistory: history });
    const prompt = [...LlamaText(state.contextText).tokenize(model.tokenizer)];
    m.checkTokens(prompt);
    const r = await m.complete(prompt, body, c.req.raw.signal);
    const enc = new TextEncoder();
    const logprobs = body.logprobs
      ? { content: r.pieces.map((p, i) => ({ token: p, logprob: r.logprobs[i]!, bytes: [...enc.encode(p)], top_logprobs: [] })) }
      : null;
    const choice = {
      index: 0,
      message: { role: 'assistant', content: r.text },
      finish_reason: r.finish,
      logprobs,
      ...(body.return_token_ids ? { token_ids: r.ids } : {}),
    };
    return c.json({
      id: m.responseId('chatcmpl'),
      object: 'chat.completion',
      created: m.now(),
      model: m.options.modelName,
      choices: [choice],
      usage: usage(r),
    });
  };
}

/** The hono app (exposed for in-process tests); `serveOpenAI` puts it on a port. One handler per route above. */
export function createOpenAIApp(first: LlamaEngine, options: OpenAIServerOptions): Hono {
  const limits = { ...DEFAULT_OPENAI_LIMITS, ...options.limits };
  const app = createServerApp({
    maxBodyBytes: limits.maxBodyBytes,
    bodySetting: '--max-body-bytes',
    badRequest: (e) => e instanceof ContextOverflowError,
    health: () => ({ model: options.modelName }),
  });
  const served = new ServedModel(first, options, limits);
  app.post('/tokenize', tokenizeRoute(served));
  app.post('/detokenize', detokenizeRoute(served));
  // Loading any file the server can read is a control route: token, Host/Origin and JSON checked first.
  if (options.reload && !options.control) throw new TypeError('createOpenAIApp: reload needs control (a token for /reload)');
  if (options.control) app.post('/reload', controlGuard({ ...options.control, boundHost: options.control.boundHost ?? '127.0.0.1' }), reloadRoute(served));
  else app.post('/reload', reloadRoute(served));
  // max_model_len as vLLM and SGLang report it: what a client checks its prompts against (the policy's promptFit).
  app.get('/v1/models', (c) =>
    c.json({ object: 'list', data: [{ id: options.modelName, object: 'model', created: 0, owned_by: 'trace-rl', max_model_len: served.engine.contextSize }] }),
  );
  app.post('/v1/completions', completionsRoute(served));
  app.post('/v1/chat/completions', chatRoute(served));
  if (options.tinker)
    addTinkerRoutes(
      app,
      {
        modelName: options.modelName,
        get contextLength() {
          return served.engine.contextSize;
        },
        sample: (engine, prompt, body, signal) => served.completeOn(engine, prompt, body, signal),
        checkTokens: (ids) => served.checkTokens(ids),
      },
      options.tinker,
    );
  return app;
}

/** Serves the app on host:port (port 0 = any free port); `url` ends without `/v1`. */
export function serveOpenAI(engine: LlamaEngine, options: OpenAIServerOptions & ListenOptions): Promise<RunningServer> {
  return listen(createOpenAIApp(engine, options), options);
}
