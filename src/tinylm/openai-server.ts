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
import type { Hono } from 'hono';
import { LlamaText, resolveChatWrapper, type ChatHistoryItem, type ChatWrapper } from 'node-llama-cpp';
import { z } from 'zod';
import { createServerApp, HttpError, listen, readJson, tooLarge, type ListenOptions, type RunningServer } from '../http/index.ts';
import { ContextOverflowError, type LlamaEngine } from './llama-engine.ts';

export type { RunningServer };

const sampling = {
  model: z.string().optional(),
  max_tokens: z.number().int().min(1).max(1 << 20).optional(),
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
  /** Request limits (docs/reliability.md); unset fields take their defaults. */
  limits?: Partial<OpenAIServerLimits>;
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
}

/** The hono app (exposed for in-process tests); `serveOpenAI` puts it on a port. */
export function createOpenAIApp(first: LlamaEngine, options: OpenAIServerOptions): Hono {
  const limits = { ...DEFAULT_OPENAI_LIMITS, ...options.limits };
  const app = createServerApp({ maxBodyBytes: limits.maxBodyBytes, bodySetting: '--max-body-bytes', badRequest: (e) => e instanceof ContextOverflowError, health: () => ({ model: options.modelName }) });
  // The served weights; `/reload` swaps them. Each request keeps the engine it started with.
  let engine = first;
  const inFlight = new Map<LlamaEngine, number>();
  const retired = new Set<LlamaEngine>();
  const use = async <T>(f: (e: LlamaEngine) => Promise<T>): Promise<T> => {
    const e = engine;
    inFlight.set(e, (inFlight.get(e) ?? 0) + 1);
    try {
      return await f(e);
    } finally {
      const left = inFlight.get(e)! - 1;
      inFlight.set(e, left);
      if (left === 0 && retired.delete(e)) await e.dispose();
    }
  };
  /** Bounds a prompt before it is tokenised (characters) and after (tokens, ids in the served model's vocabulary). */
  const checkChars = (chars: number) => {
    if (chars > limits.maxPromptChars) throw tooLarge(`a prompt of ${chars.toLocaleString('en')} characters`, limits.maxPromptChars, 'characters', '--max-prompt-chars', 'prompt_too_long');
  };
  const checkTokens = (ids: readonly number[]) => {
    const maxTokens = Math.min(limits.maxPromptTokens ?? engine.contextSize, engine.contextSize);
    const vocab = engine.vocabSize;
    if (ids.length > maxTokens) throw tooLarge(`a prompt of ${ids.length.toLocaleString('en')} tokens`, maxTokens, 'tokens', limits.maxPromptTokens === undefined ? 'the context length, --context' : '--max-prompt-tokens', 'prompt_too_many_tokens');
    const bad = ids.findIndex((id) => id >= vocab);
    if (bad >= 0) throw new HttpError(400, `prompt[${bad}]: token id ${ids[bad]} is outside the vocabulary (0 … ${vocab - 1})`, 'token_out_of_vocabulary', 'prompt');
  };
  const maxDefault = options.defaultMaxTokens ?? 256;
  let wrapper: ChatWrapper | undefined;
  /** Seed of the next request that gives none (requests differ, and a restarted server repeats them). */
  let nextSeed = 0;
  // Response ids: a random prefix per server and a counter per response, so no two responses of one
  // server share an id (they were `cmpl-<seed counter>`, which seeded requests never advanced).
  const idPrefix = randomBytes(4).toString('hex');
  let responses = 0;
  const responseId = (kind: 'cmpl' | 'chatcmpl') => `${kind}-${idPrefix}-${responses++}`;
  const now = () => Math.floor(options.clock?.() ?? 0);

  const run = (prompt: number[], body: z.infer<z.ZodObject<typeof sampling>>, signal: AbortSignal): Promise<Completion> => use((e) => generate(e, prompt, body, signal));
  const generate = async (engine: LlamaEngine, prompt: number[], body: z.infer<z.ZodObject<typeof sampling>>, signal: AbortSignal): Promise<Completion> => {
    const model = engine.model;
    const stops = body.stop == null ? [] : typeof body.stop === 'string' ? [body.stop] : body.stop;
    const pieces: string[] = [];
    let text = '';
    let cut: number | undefined;
    const greedy = body.temperature === 0;
    const out = await engine.generate(prompt, {
      maxTokens: body.max_completion_tokens ?? body.max_tokens ?? maxDefault,
      stop: [],
      seed: body.seed ?? nextSeed++,
      greedy,
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
    };
  };

  const withBos = (ids: number[]) => {
    const t = engine.model.tokens;
    return t.bos !== null && t.shouldPrependBosToken && ids[0] !== t.bos ? [t.bos, ...ids] : ids;
  };

  // vLLM / SGLang / llama.cpp tokenizer routes: clients build token-id prompts with the model's own ids.
  app.post('/tokenize', async (c) => {
    const body = await readJson(c, tokenizeSchema);
    const text = body.prompt ?? body.content ?? '';
    checkChars(text.length);
    const special = body.add_special_tokens ?? body.add_special ?? true;
    const ids = [...engine.model.tokenize(text, true)] as number[];
    const tokens = special ? withBos(ids) : ids;
    return c.json({ tokens, count: tokens.length, max_model_len: engine.contextSize });
  });
  app.post('/detokenize', async (c) => {
    const body = await readJson(c, detokenizeSchema);
    const bad = body.tokens.findIndex((id) => id >= engine.vocabSize);
    if (bad >= 0) throw new HttpError(400, `tokens[${bad}]: token id ${body.tokens[bad]} is outside the vocabulary (0 … ${engine.vocabSize - 1})`, 'token_out_of_vocabulary', 'tokens');
    const text = engine.model.detokenize(body.tokens as never, false);
    return c.json({ prompt: text, content: text });
  });
  app.post('/reload', async (c) => {
    if (!options.reload) throw new HttpError(404, 'this server was started without --allow-reload', 'reload_disabled');
    const body = await readJson(c, z.looseObject({ model: z.string().min(1) }));
    const next = await options.reload(body.model);
    const old = engine;
    engine = next;
    if ((inFlight.get(old) ?? 0) === 0) await old.dispose();
    else retired.add(old);
    return c.json({ ok: true, model: body.model });
  });

  app.get('/v1/models', (c) => c.json({ object: 'list', data: [{ id: options.modelName, object: 'model', created: 0, owned_by: 'trace-rl' }] }));

  app.post('/v1/completions', async (c) => {
    const body = await readJson(c, completionSchema);
    checkChars(typeof body.prompt === 'string' ? body.prompt.length : 0);
    const prompt = typeof body.prompt === 'string' ? withBos([...engine.model.tokenize(body.prompt, true)]) : body.prompt;
    checkTokens(prompt);
    const r = await run(prompt, body, c.req.raw.signal);
    const offsets: number[] = [];
    let at = 0;
    for (const p of r.pieces) {
      offsets.push(at);
      at += p.length;
    }
    return c.json({
      id: responseId('cmpl'),
      object: 'text_completion',
      created: now(),
      model: options.modelName,
      choices: [
        {
          index: 0,
          text: r.text,
          finish_reason: r.finish,
          logprobs: body.logprobs == null ? null : { tokens: r.pieces, token_logprobs: r.logprobs, top_logprobs: null, text_offset: offsets },
          ...(body.return_token_ids ? { token_ids: r.ids, prompt_token_ids: prompt } : {}),
        },
      ],
      usage: { prompt_tokens: r.promptTokens, completion_tokens: r.ids.length, total_tokens: r.promptTokens + r.ids.length },
    });
  });

  app.post('/v1/chat/completions', async (c) => {
    const body = await readJson(c, chatSchema);
    checkChars(body.messages.reduce((n, m) => n + (m.content?.length ?? 0), 0));
    const model = engine.model;
    wrapper ??= resolveChatWrapper(model);
    const history: ChatHistoryItem[] = body.messages.map((m) =>
      m.role === 'assistant' ? { type: 'model', response: [m.content ?? ''] } : m.role === 'user' ? { type: 'user', text: m.content ?? '' } : { type: 'system', text: m.content ?? '' },
    );
    if (history.at(-1)?.type !== 'model') history.push({ type: 'model', response: [] });
    const state = wrapper.generateContextState({ chatHistory: history });
    const prompt = [...LlamaText(state.contextText).tokenize(model.tokenizer)];
    checkTokens(prompt);
    const r = await run(prompt, body, c.req.raw.signal);
    const enc = new TextEncoder();
    return c.json({
      id: responseId('chatcmpl'),
      object: 'chat.completion',
      created: now(),
      model: options.modelName,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: r.text },
          finish_reason: r.finish,
          logprobs: body.logprobs ? { content: r.pieces.map((p, i) => ({ token: p, logprob: r.logprobs[i]!, bytes: [...enc.encode(p)], top_logprobs: [] })) } : null,
          ...(body.return_token_ids ? { token_ids: r.ids } : {}),
        },
      ],
      usage: { prompt_tokens: r.promptTokens, completion_tokens: r.ids.length, total_tokens: r.promptTokens + r.ids.length },
    });
  });

  return app;
}

/** Serves the app on host:port (port 0 = any free port); `url` ends without `/v1`. */
export function serveOpenAI(engine: LlamaEngine, options: OpenAIServerOptions & ListenOptions): Promise<RunningServer> {
  return listen(createOpenAIApp(engine, options), options);
}
