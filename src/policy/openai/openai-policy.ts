import type { Transcript } from '../../tokens/index.ts';
import type { TokenSpan } from '../../tree/types.ts';
import { PolicyCallError } from '../errors.ts';
import type { Action } from '../../tree/types.ts';
import type { Policy, PolicyContext, PolicyOutput, PromptFit } from '../types.ts';
import type { Prompt } from '../../tree/types.ts';
import { MalformedResponseError, parseResponse, restoreStopTag, tokenSpan } from './response.ts';
import { Router, serverFailed } from './router.ts';
import { MAX_RESPONSE_BYTES, ResponseTooLargeError } from './bounded-fetch.ts';
import { ConnectionError, HttpStatusError } from './http-errors.ts';
import { JsonPost } from './json-post.ts';
import { redactSecret } from '../../util/redact.ts';
import { smallestContext, TokenCounter } from './served-context.ts';
import { createRng } from '../../util/rng.ts';

export interface OpenAIPolicyOptions {
  /** One or more server base URLs (e.g. http://host:8000/v1); requests go to the least-loaded one. */
  baseURLs: readonly string[];
  model: string;
  /**
   * Sent as `Authorization: Bearer <key>` to every server. Default 'EMPTY' (local servers ignore it).
   * The CLI and the policy registry read it from TRACE_RL_API_KEY / OPENAI_API_KEY or policy.apiKeyFile
   * (policy/openai/api-key.ts), never from a flag or a stored configuration.
   */
  apiKey?: string;
  /** Largest response body accepted from a server, in bytes (default 32 MiB); more is a parse_error. */
  maxResponseBytes?: number;
  /**
   * 'tokens': token-in/token-out on /v1/completions — the prompt is a list of token ids (the
   * transcript's prompt ids, then each earlier turn's sampled ids and its observation's ids), never
   * re-tokenised; needs `transcript`. 'completions': one growing text prompt. 'chat': messages, the
   * server applies its chat template. Default 'completions'.
   */
  mode?: 'chat' | 'completions' | 'tokens';
  /** Token mode: the model's tokenizer and (optionally) chat template, the same one export uses. */
  transcript?: Transcript;
  /** Stop strings; the matched one is put back into the turn's text. Default ['</search>', '</answer>']. */
  stop?: readonly string[];
  /** Sampling. Defaults are the exact-probability settings: temperature 1, top_p 1, no top_k. */
  temperature?: number;
  topP?: number;
  /** Sent only when set (vLLM / SGLang / llama.cpp accept it; hosted APIs may not). */
  topK?: number;
  /** Send a per-call seed drawn from the call's own random stream (default true). */
  seed?: boolean;
  /** Ask for per-token log-probabilities (default true). */
  logprobs?: boolean;
  /**
   * Server-specific request extras. 'vllm' adds `return_token_ids: true` (token ids in
   * `choices[0].token_ids`, vLLM ≥ 0.10.2) and `include_stop_str_in_output: true` (the stop tag stays in
   * the text and the ids, so branches are token-exact). Default 'none' (plain OpenAI fields only).
   */
  extras?: 'vllm' | 'none';
  /** Chat mode: an optional system message before the rendered prompt. */
  system?: string;
  /**
   * A trajectory and its continuations stay on one server unless it fails (router.ts). Given, this also
   * moves them when their server has more than this many requests in flight above the least-loaded
   * one (each move is a prefix-cache miss). Default: no limit.
   */
  stickySlack?: number;
  /**
   * Chat mode with tools (function-calling environments such as BFCL): the environment builds the
   * messages and the `tools` list, and turns the reply (text and tool calls) into the turn's action.
   * No stop strings are sent.
   */
  conversation?: ToolConversation;
}

/** What a function-calling environment supplies to a chat-mode policy. */
export interface ToolConversation {
  messages(ctx: PolicyContext): unknown[];
  tools(ctx: PolicyContext): unknown[];
  action(reply: { content: string; toolCalls: readonly { id: string; name: string; arguments: string }[] }): { thought: string; action: Action };
}

/**
 * A policy served by OpenAI-compatible servers (vLLM, SGLang, llama.cpp, hosted APIs) over a lean
 * keep-alive HTTP client (json-post.ts). One call generates one turn and stops at `</search>` or
 * `</answer>`. The client does not retry: the rollout engine retries with backoff and records failures.
 * Returns text only; the engine parses the action (Search-R1 parser).
 */
export class OpenAIPolicy implements Policy {
  readonly name: string;
  readonly router: Router;
  private readonly clients: JsonPost[];
  private readonly opts: Required<
    Omit<OpenAIPolicyOptions, 'topK' | 'system' | 'apiKey' | 'conversation' | 'transcript' | 'maxResponseBytes' | 'stickySlack'>
  > &
    Pick<OpenAIPolicyOptions, 'topK' | 'system' | 'conversation' | 'transcript' | 'stickySlack'>;
  /**
   * The body's text around its seed and prompt, per maxTokens and greediness: completions mode's around
   * the seed and prompt (completionsBody), token mode's before and after the seed (tokensFields).
   */
  private readonly bodyFrames = new Map<number, { head: string; tail: string }>();
  /** Token mode: each recorded turn's ids and observation ids as JSON text (turnIdsText). */
  private readonly turnIds = new WeakMap<object, { ids: readonly number[]; length: number; observation: string; text: string }>();
  /** Servers that refused a token-id prompt (HTTP 400/422) and answered the same request as text. */
  private readonly textOnly = new Set<number>();
  /** The API key, cut out of failure messages: a server may echo what it was sent, and messages are stored on nodes. */
  private readonly secret?: string;
  /** The servers' smallest reported context, asked once (promptFit). */
  private context?: Promise<number | undefined>;
  private readonly apiKey: string;
  /** Counts text prompts on the first server's /tokenize (promptFit, outside token mode). */
  private readonly counter: TokenCounter;

  constructor(options: OpenAIPolicyOptions) {
    if (options.baseURLs.length === 0) throw new RangeError('OpenAIPolicy: baseURLs is empty; give at least one server URL such as http://localhost:8000/v1');
    this.opts = {
      mode: 'completions',
      stop: ['</search>', '</answer>'],
      temperature: 1,
      topP: 1,
      seed: true,
      logprobs: true,
      extras: 'none',
      ...options,
    };
    if (this.opts.mode === 'tokens' && !this.opts.transcript)
      throw new RangeError('OpenAIPolicy: mode "tokens" needs a transcript (the model’s tokenizer, e.g. loadTranscript("qwen3"))');
    this.name = `openai:${options.model}`;
    this.router = new Router(options.baseURLs, this.opts.stickySlack === undefined ? {} : { slack: this.opts.stickySlack });
    if (options.apiKey) this.secret = options.apiKey;
    const http = { apiKey: options.apiKey ?? 'EMPTY', maxResponseBytes: options.maxResponseBytes ?? MAX_RESPONSE_BYTES };
    this.apiKey = http.apiKey;
    this.clients = options.baseURLs.map((baseURL) => new JsonPost(baseURL, http));
    this.counter = new TokenCounter(options.baseURLs[0]!, options.model, http);
  }

  /**
   * The prompt's tokens against the smallest context the servers report (served-context.ts), so that
   * setup skips a task that cannot fit (train/prompt-fit.ts). Token mode counts the ids act() sends
   * (the transcript); completions mode asks the server's /tokenize for the text it sends; chat mode
   * counts the messages' text without the server's chat template, a lower bound (a task refused
   * surely does not fit; one a few tokens short may still be kept and end `context_overflow`). Not
   * answered (undefined) where a server reports no context or counts no tokens (a hosted API), nor
   * for a function-calling conversation, whose messages the environment builds per call.
   */
  async promptFit(_prompt: Prompt, rendered: string): Promise<PromptFit | undefined> {
    if (this.opts.conversation) return undefined;
    const context = await (this.context ??= smallestContext(this.router.urls, this.opts.model, this.apiKey));
    if (context === undefined) return undefined;
    const tokens = await this.promptTokens(rendered);
    return tokens === undefined ? undefined : { tokens, context };
  }

  private async promptTokens(rendered: string): Promise<number | undefined> {
    const t = this.opts.transcript;
    if (this.opts.mode === 'tokens' && t) {
      if (t.tokenizer.prepare) await t.prepare([rendered], [], []);
      return t.promptIdsView(rendered).length;
    }
    return this.counter.count(this.opts.mode === 'chat' && this.opts.system ? `${this.opts.system}\n${rendered}` : rendered);
  }

  async act(ctx: PolicyContext): Promise<PolicyOutput> {
    if (this.opts.mode === 'tokens') return this.actOnTokens(ctx);
    const route = this.router.acquire(ctx.trajectoryId);
    try {
      const client = this.clients[route.index]!;
      // The body goes straight into the call, not into a local: this function waits on the server with
      // its locals alive, and 256 calls in flight would keep every prompt twice over (object and text).
      const raw =
        this.opts.mode === 'chat'
          ? await client.post('chat/completions', this.request(ctx), ctx.signal)
          : await client.postJsonText('completions', this.completionsBody(ctx), ctx.signal);
      const r = parseResponse(raw, this.opts.mode);
      const conversation = this.opts.mode === 'chat' ? this.opts.conversation : undefined;
      const text = conversation ? r.text : restoreStopTag(r, this.opts.stop);
      const out = output(text, r, ctx, tokenSpan(r, 'text'));
      if (conversation) {
        const structured = conversation.action({ content: r.text, toolCalls: r.toolCalls ?? [] });
        out.action = structured.action;
        out.thought = structured.thought;
      }
      return out;
    } catch (e) {
      const err = toPolicyError(e, route.url, this.secret);
      if (serverFailed(err, ctx.signal)) route.failed();
      throw err;
    } finally {
      route.done();
    }
  }

  /**
   * Token mode: the prompt's ids are built from the trees' own records (sampled ids of earlier turns,
   * observation ids from the transcript), so a branch restored from a prefix continues the exact
   * sequence. The stop tag is kept by the server (`include_stop_str_in_output`); when a server cuts it
   * anyway, its ids are appended with mask 0 (not sampled, never trained on).
   */
  private async actOnTokens(ctx: PolicyContext): Promise<PolicyOutput> {
    const t = this.opts.transcript!;
    const route = this.router.acquire(ctx.trajectoryId);
    try {
      // Only a server tokenizer needs its cache filled first; local ones encode synchronously.
      if (t.tokenizer.prepare)
        await t.prepare(
          [ctx.rendered],
          ctx.turns.map((x) => x.observation).filter((o) => o !== ''),
          ctx.turns.filter((x) => !x.tokens).map(turnText),
        );
      // The prompt's and observations' ids come from the transcript's caches and the turns' from their
      // records: a call encodes only text it has not seen (a text-only turn, a new observation). The
      // prompt goes out as JSON text written from each list's cached text (idsText), not as one array
      // built and serialised anew every call.
      let prompt = withIds('', t.promptIdsView(ctx.rendered));
      let exact = true;
      for (const turn of ctx.turns) {
        if (turn.tokens) {
          prompt = withText(prompt, this.turnIdsText(turn, turn.tokens));
          exact &&= turn.tokens.prompt === 'ids';
        } else {
          const ids = t.tokenizer.encode(turnText(turn));
          if (ids.length > 0) prompt = prompt === '' ? listText(ids) : `${prompt},${listText(ids)}`;
          prompt = withIds(prompt, t.observationIdsView(turn.observation));
          exact = false;
        }
      }
      const client = this.clients[route.index]!;
      const fields = this.tokensFields(ctx);
      let raw: unknown;
      let sentIds = !this.textOnly.has(route.index);
      if (sentIds) {
        try {
          raw = await client.postJsonText('completions', `${fields}"prompt":[${prompt}]}`, ctx.signal);
        } catch (e) {
          if (!(e instanceof HttpStatusError && (e.status === 400 || e.status === 422)) || /context|too long|maximum/i.test(e.message)) throw e;
          // The server may not take ids: try the same request as text once; if that works, remember it.
          raw = await this.asText(ctx, client, fields);
          this.textOnly.add(route.index);
          sentIds = false;
        }
      } else raw = await this.asText(ctx, client, fields);
      const r = parseResponse(raw, 'completions');
      const span = tokenSpan(r, sentIds && exact ? 'ids' : 'text');
      if (!span) return output(restoreStopTag(r, this.opts.stop), r, ctx, undefined);
      if (t.tokenizer.prepare) await t.tokenizer.prepare([], [span.ids]);
      const sampled = t.tokenizer.decode(span.ids);
      const full = restoreStopTag(r, this.opts.stop, sampled);
      if (full.length > sampled.length) {
        const tag = full.slice(sampled.length);
        if (t.tokenizer.prepare) await t.tokenizer.prepare([tag]);
        const extra = t.tokenizer.encode(tag);
        span.ids.push(...extra);
        span.mask = [...span.mask, ...extra.map(() => 0)]; // the span's mask is a shared one (allSampled)
        span.logprobs.push(...extra.map(() => 0));
      }
      return output(full, r, ctx, span);
    } catch (e) {
      const err = toPolicyError(e, route.url, this.secret);
      if (serverFailed(err, ctx.signal)) route.failed();
      throw err;
    } finally {
      route.done();
    }
  }

  /**
   * Completions mode's body as JSON text, the same text as JSON.stringify(this.request(ctx)) (a test
   * holds the two together): the fields that are the same on every call are written once per
   * (maxTokens, greedy), so a call writes only its seed and its prompt, with no body object and no copy
   * of the stop list.
   */
  private completionsBody(ctx: PolicyContext): string {
    const greedy = ctx.greedy === true;
    const key = greedy ? -ctx.maxTokens - 1 : ctx.maxTokens;
    let frame = this.bodyFrames.get(key);
    if (frame === undefined) {
      // The fields of such a call around its prompt, from request() itself (with a generator of its own,
      // so the call's stream is not drawn from here); the seed, drawn per call, is written per call.
      const fields = Object.entries(this.request({ ...ctx, rng: createRng(0), rendered: '', turns: [] }));
      const at = fields.findIndex(([k]) => k === 'prompt');
      const before = fields.slice(0, at).filter(([k]) => k !== 'seed');
      const after = JSON.stringify(Object.fromEntries(fields.slice(at + 1)));
      frame = { head: `${JSON.stringify(Object.fromEntries(before)).slice(0, -1)},`, tail: after === '{}' ? '}' : `,${after.slice(1)}` };
      if (this.bodyFrames.size >= 64) this.bodyFrames.clear(); // a caller that varies maxTokens call by call
      this.bodyFrames.set(key, frame);
    }
    // request() puts the seed last before the prompt.
    const seed = this.opts.seed && !greedy ? `"seed":${ctx.rng.int(2 ** 31)},` : '';
    let prompt = promptJson(ctx.rendered);
    for (const t of ctx.turns) prompt += turnJson(t);
    return `${frame.head}${seed}"prompt":"${prompt}"${frame.tail}`;
  }

  /**
   * A recorded turn's ids and its observation's, as the prompt's JSON text ("1,2,3"), written once a
   * turn: every later call of its trajectory sends them again. Checked against the turn's ids and
   * observation (the same array and string, by reference): a turn changed since is written again. Kept
   * per policy, as its transcript encodes the observation.
   */
  private turnIdsText(turn: PolicyContext['turns'][number], { ids }: TokenSpan): string {
    const c = this.turnIds.get(turn);
    if (c !== undefined && c.ids === ids && c.length === ids.length && c.observation === turn.observation) return c.text;
    const text = withIds(withIds('', ids), this.opts.transcript!.observationIdsView(turn.observation));
    this.turnIds.set(turn, { ids, length: ids.length, observation: turn.observation, text });
    return text;
  }

  /** Token mode's request as text, for a server that refused id prompts: the same fields, the prompt as the transcript's text. */
  private asText(ctx: PolicyContext, client: JsonPost, fields: string): Promise<unknown> {
    const t = this.opts.transcript!;
    const text = t.promptText(ctx.rendered) + ctx.turns.map((x) => turnText(x) + (x.observation === '' ? '' : t.observationText(x.observation))).join('');
    return client.post('completions', { ...(JSON.parse(`${fields}"prompt":""}`) as object), prompt: text }, ctx.signal);
  }

  /**
   * Token mode's body up to its prompt, as JSON text: `{"model":…,"no_stop_trim":true,` — the text of
   * JSON.stringify({ ...this.request(ctx), ...TOKEN_FIELDS, prompt }) before `"prompt"` (a test holds
   * the two together). Written as completionsBody is: the fields around the seed once per (maxTokens,
   * greedy), the seed per call, with no body object, no copy of the stop list and no JSON.stringify a call.
   */
  private tokensFields(ctx: PolicyContext): string {
    const greedy = ctx.greedy === true;
    const key = greedy ? -ctx.maxTokens - 1 : ctx.maxTokens;
    let frame = this.bodyFrames.get(key);
    if (frame === undefined) {
      // As in completionsBody: from request() itself, with a generator of its own.
      const fields = Object.entries({ ...this.request({ ...ctx, rng: createRng(0), rendered: '', turns: [] }), ...TOKEN_FIELDS });
      const at = fields.findIndex(([k]) => k === 'seed');
      const before = at < 0 ? fields : fields.slice(0, at);
      const after = at < 0 ? [] : fields.slice(at + 1);
      frame = {
        head: `${JSON.stringify(Object.fromEntries(before)).slice(0, -1)},`,
        tail: after.length === 0 ? '' : `${JSON.stringify(Object.fromEntries(after)).slice(1, -1)},`,
      };
      if (this.bodyFrames.size >= 64) this.bodyFrames.clear(); // a caller that varies maxTokens call by call
      this.bodyFrames.set(key, frame);
    }
    const seed = this.opts.seed && !greedy ? `"seed":${ctx.rng.int(2 ** 31)},` : '';
    return `${frame.head}${seed}${frame.tail}`;
  }

  /** The JSON body for one call (exposed for tests and docs). */
  request(ctx: PolicyContext): Record<string, unknown> {
    const o = this.opts;
    const body: Record<string, unknown> = {
      model: o.model,
      max_tokens: ctx.maxTokens,
      stop: [...o.stop],
      temperature: ctx.greedy ? 0 : o.temperature,
      top_p: ctx.greedy ? 1 : o.topP,
    };
    if (o.topK !== undefined) body.top_k = o.topK;
    if (o.seed && !ctx.greedy) body.seed = ctx.rng.int(2 ** 31);
    if (o.mode === 'tokens') {
      // The prompt ids are added by actOnTokens.
      if (o.logprobs) body.logprobs = 0;
    } else if (o.mode === 'chat' && o.conversation) {
      delete body.stop;
      body.messages = o.conversation.messages(ctx);
      const tools = o.conversation.tools(ctx);
      if (tools.length > 0) body.tools = tools;
      if (o.logprobs) body.logprobs = true;
    } else if (o.mode === 'chat') {
      const messages: Array<{ role: string; content: string }> = [];
      if (o.system) messages.push({ role: 'system', content: o.system });
      messages.push({ role: 'user', content: ctx.rendered });
      for (const t of ctx.turns) {
        messages.push({ role: 'assistant', content: turnText(t) });
        messages.push({ role: 'user', content: t.observation });
      }
      body.messages = messages;
      if (o.logprobs) body.logprobs = true;
    } else {
      body.prompt = completionsPrompt(ctx);
      if (o.logprobs) body.logprobs = 0;
    }
    if (o.extras === 'vllm') {
      body.return_token_ids = true;
      body.include_stop_str_in_output = true;
    }
    return body;
  }
}

/** The policy's result for one response; `generatedTokens` counts sampled tokens when the server says. */
function output(text: string, r: ReturnType<typeof parseResponse>, ctx: PolicyContext, tokens: TokenSpan | undefined): PolicyOutput {
  const generated = r.completionTokens ?? r.tokenIds?.length ?? r.logprobs?.length ?? Math.ceil(text.length / 4);
  // Fields set one by one, not spread from literals: this runs once a call.
  const out: PolicyOutput = { text, generatedTokens: Math.min(generated, ctx.maxTokens) };
  if (tokens) out.tokens = tokens;
  if (r.logprobs) {
    let sum = 0;
    for (const lp of r.logprobs) sum += lp;
    out.logprob = sum;
  }
  return out;
}

/**
 * An id list's JSON text without its brackets ("1,2,3"), kept per list: the prompt's and observations'
 * lists are the transcript's cached arrays and a turn's is its record, so each is written once, not
 * again on every later call of its trajectory (serialising a prompt of 600 ids cost about 16 µs a
 * call). Checked against the list's length, in case a list grows after it was written.
 */
const idsText = new WeakMap<readonly number[], { length: number; text: string }>();

const listText = (ids: readonly number[]) => JSON.stringify(ids).slice(1, -1);

/** `prompt` (id lists' text so far) with `ids` appended, comma-separated: concatenated, not joined from an array. */
function withIds(prompt: string, ids: readonly number[]): string {
  if (ids.length === 0) return prompt;
  let known = idsText.get(ids);
  if (known === undefined || known.length !== ids.length) idsText.set(ids, (known = { length: ids.length, text: listText(ids) }));
  return withText(prompt, known.text);
}

/** `prompt` with an id list's text appended, comma-separated. */
const withText = (prompt: string, text: string) => (text === '' ? prompt : prompt === '' ? text : `${prompt},${text}`);

/** What token mode adds to request(): ids back, the stop string kept in the text and in the ids. */
const TOKEN_FIELDS = { return_token_ids: true, include_stop_str_in_output: true, no_stop_trim: true } as const;

/**
 * The prompt's text in completions mode as JSON string contents (escaped, unquoted), written from
 * pieces escaped once each: the rendered prompt (shared by every call of every trajectory of its
 * prompt) and each turn with its observation (by every later call of its trajectory). Escaping the
 * whole conversation anew a call copied it twice over (flattened, then escaped) for the body's one
 * copy. JSON escaping works character by character, so the pieces' escapes joined are the whole's;
 * the one exception, a UTF-16 surrogate pair split across two pieces, is written as two \u escapes,
 * which a JSON reader decodes to the same text.
 */
function promptJson(rendered: string): string {
  let json = renderedJson.get(rendered);
  if (json === undefined) {
    json = jsonContents(rendered);
    if (renderedJson.size >= MAX_RENDERED_CACHED || renderedJsonChars + json.length > MAX_RENDERED_CHARS) {
      renderedJson.clear();
      renderedJsonChars = 0;
    }
    renderedJson.set(rendered, json);
    renderedJsonChars += json.length;
  }
  return json;
}

function turnJson(t: PolicyContext['turns'][number]): string {
  const c = turnsJson.get(t);
  // Checked against the turn's text and observation (the same strings, compared by reference): a turn
  // changed after it was escaped is escaped again.
  if (c !== undefined && c.text === t.text && c.observation === t.observation) return c.json;
  const json = jsonContents(turnText(t) + t.observation);
  turnsJson.set(t, { text: t.text, observation: t.observation, json });
  return json;
}

const jsonContents = (s: string) => JSON.stringify(s).slice(1, -1);

/**
 * Rendered prompts escaped (promptJson), forgotten all at once past this many or this much text (a
 * step's prompts fit many times over; a dataset of long contexts must not hold a second copy of itself).
 */
const MAX_RENDERED_CACHED = 4096;
const MAX_RENDERED_CHARS = 16 * 2 ** 20;
const renderedJson = new Map<string, string>();
let renderedJsonChars = 0;
const turnsJson = new WeakMap<object, { text: string | undefined; observation: string; json: string }>();

/** Completions mode's prompt: the rendered prompt, then each turn's text and observation. */
function completionsPrompt(ctx: PolicyContext): string {
  let prompt = ctx.rendered;
  for (const t of ctx.turns) prompt += turnText(t) + t.observation;
  return prompt;
}

function turnText(t: PolicyContext['turns'][number]): string {
  return t.text ?? `<think>${t.thought}</think>\n<${t.action.type}>${t.action.input}</${t.action.type}>`;
}

/** Why a connection failed: the operating system's code (ECONNREFUSED, ECONNRESET, …) in the error's causes, else the innermost cause's message. */
function systemCode(e: unknown): string | undefined {
  let innermost: string | undefined;
  for (let c: unknown = (e as { cause?: unknown }).cause, depth = 0; c instanceof Error && depth < 5; c = (c as { cause?: unknown }).cause, depth++) {
    const code = (c as { code?: unknown }).code;
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return code;
    innermost = c.message;
  }
  return innermost;
}

/** Longest server-supplied text kept in a failure message (an HTML error page would fill the store and the terminal). */
const MAX_MESSAGE_CHARS = 300;

/**
 * Maps client errors to failure data: timeouts → 'timeout'; connection failures, 408/409/429/5xx →
 * retryable 'server_error'; other 4xx → non-retryable 'server_error' (the request itself is wrong;
 * 401/403 say to check the API key); unparseable, incomplete or oversized bodies → 'parse_error'.
 * Aborts pass through (the engine owns them). `url`, the server called, starts the message; `secret`
 * (the API key) is replaced by "[API key]" wherever the server's text repeats it, raw or transformed
 * (URL-encoded, JSON-escaped, hex, base64: util/redact.ts).
 */
export function toPolicyError(e: unknown, url?: string, secret?: string): unknown {
  if (e instanceof PolicyCallError) return e;
  const at = (raw: string) => {
    const text = redactSecret(raw, secret, '[API key]');
    return `${url ? `${url}: ` : ''}${text.length > MAX_MESSAGE_CHARS ? `${text.slice(0, MAX_MESSAGE_CHARS)}…` : text}`;
  };
  if (e instanceof ConnectionError) {
    if (e.timedOut) return new PolicyCallError('timeout', at(`server timed out: ${e.message}`));
    const code = systemCode(e);
    return new PolicyCallError('server_error', at(`connection failed: ${e.message}${code ? ` (${code})` : ''}`));
  }
  if (e instanceof HttpStatusError) {
    const s = e.status;
    const retryable = s === 408 || s === 409 || s === 429 || s >= 500;
    const key = s === 401 || s === 403 ? ' (the server refused the API key: set TRACE_RL_API_KEY or OPENAI_API_KEY, or policy.apiKeyFile)' : '';
    return new PolicyCallError('server_error', `${at(`HTTP ${s}: ${e.message}`)}${key}`, retryable);
  }
  if (e instanceof ResponseTooLargeError) return new PolicyCallError('parse_error', at(e.message), false);
  if (e instanceof SyntaxError) return new PolicyCallError('parse_error', at(`response is not valid JSON: ${e.message}`));
  if (e instanceof MalformedResponseError) return new PolicyCallError('parse_error', at(e.message));
  return e;
}
