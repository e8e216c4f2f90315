import OpenAI from 'openai';
import { PolicyCallError } from '../errors.ts';
import type { Action } from '../../tree/types.ts';
import type { Policy, PolicyContext, PolicyOutput } from '../types.ts';
import { MalformedResponseError, parseResponse, restoreStopTag, tokenSpan } from './response.ts';
import { Router } from './router.ts';

export interface OpenAIPolicyOptions {
  /** One or more server base URLs (e.g. http://host:8000/v1); requests go to the least-loaded one. */
  baseURLs: readonly string[];
  model: string;
  /** Default 'EMPTY' (local servers ignore it). */
  apiKey?: string;
  /** 'completions' keeps the text token-exact (one growing prompt); 'chat' uses the server's chat template. Default 'completions'. */
  mode?: 'chat' | 'completions';
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
  /** Sticky routing tolerance: keep a trajectory's server while it has at most this many more requests in flight than the least-loaded one. Default 1. */
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
 * A policy served by OpenAI-compatible servers (vLLM, SGLang, llama.cpp, hosted APIs) through the
 * maintained `openai` client. One call generates one turn and stops at `</search>` or `</answer>`.
 * The client's own retries are off: the rollout engine retries with backoff and records failures.
 * Returns text only; the engine parses the action (Search-R1 parser).
 */
export class OpenAIPolicy implements Policy {
  readonly name: string;
  readonly router: Router;
  private readonly clients: OpenAI[];
  private readonly opts: Required<Omit<OpenAIPolicyOptions, 'topK' | 'system' | 'apiKey' | 'conversation'>> & Pick<OpenAIPolicyOptions, 'topK' | 'system' | 'conversation'>;

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
      stickySlack: 1,
      ...options,
    };
    this.name = `openai:${options.model}`;
    this.router = new Router(options.baseURLs, { slack: this.opts.stickySlack });
    this.clients = options.baseURLs.map((baseURL) => new OpenAI({ baseURL, apiKey: options.apiKey ?? 'EMPTY', maxRetries: 0 }));
  }

  async act(ctx: PolicyContext): Promise<PolicyOutput> {
    const route = this.router.acquire(ctx.trajectoryId);
    try {
      const body = this.request(ctx);
      const client = this.clients[route.index]!;
      const options = { signal: ctx.signal };
      // The server extras are not in the client's request types; the body is passed through as JSON.
      const raw: unknown =
        this.opts.mode === 'chat'
          ? await client.chat.completions.create(body as unknown as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming, options)
          : await client.completions.create(body as unknown as OpenAI.Completions.CompletionCreateParamsNonStreaming, options);
      const r = parseResponse(raw, this.opts.mode);
      const conversation = this.opts.mode === 'chat' ? this.opts.conversation : undefined;
      const text = conversation ? r.text : restoreStopTag(r, this.opts.stop);
      const tokens = tokenSpan(r);
      const generated = r.completionTokens ?? r.tokenIds?.length ?? r.logprobs?.length ?? Math.ceil(text.length / 4);
      const structured = conversation ? conversation.action({ content: r.text, toolCalls: r.toolCalls ?? [] }) : undefined;
      return {
        text,
        ...(structured ? { action: structured.action, thought: structured.thought } : {}),
        generatedTokens: Math.min(generated, ctx.maxTokens),
        ...(tokens ? { tokens } : {}),
        ...(r.logprobs ? { logprob: r.logprobs.reduce((a, b) => a + b, 0) } : {}),
      };
    } catch (e) {
      throw toPolicyError(e);
    } finally {
      route.done();
    }
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
    if (o.mode === 'chat' && o.conversation) {
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
      body.prompt = ctx.rendered + ctx.turns.map((t) => turnText(t) + t.observation).join('');
      if (o.logprobs) body.logprobs = 0;
    }
    if (o.extras === 'vllm') {
      body.return_token_ids = true;
      body.include_stop_str_in_output = true;
    }
    return body;
  }
}

function turnText(t: PolicyContext['turns'][number]): string {
  return t.text ?? `<think>${t.thought}</think>\n<${t.action.type}>${t.action.input}</${t.action.type}>`;
}

/**
 * Maps client errors to failure data: timeouts → 'timeout'; connection failures, 408/409/429/5xx →
 * retryable 'server_error'; other 4xx → non-retryable 'server_error' (the request itself is wrong);
 * unparseable or incomplete bodies → 'parse_error'. Aborts pass through (the engine owns them).
 */
export function toPolicyError(e: unknown): unknown {
  if (e instanceof PolicyCallError || e instanceof OpenAI.APIUserAbortError) return e;
  if (e instanceof OpenAI.APIConnectionTimeoutError) return new PolicyCallError('timeout', `server timed out: ${e.message}`);
  if (e instanceof OpenAI.APIConnectionError) return new PolicyCallError('server_error', `connection failed: ${e.message}`);
  if (e instanceof OpenAI.APIError) {
    const s = e.status ?? 0;
    const retryable = s === 408 || s === 409 || s === 429 || s >= 500;
    return new PolicyCallError('server_error', `HTTP ${s}: ${e.message}`, retryable);
  }
  if (e instanceof SyntaxError) return new PolicyCallError('parse_error', `response is not valid JSON: ${e.message}`);
  if (e instanceof MalformedResponseError) return new PolicyCallError('parse_error', e.message);
  return e;
}
