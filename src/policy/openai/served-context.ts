/**
 * What an OpenAI-compatible server says of its model's context, and how many tokens it makes of a
 * prompt: what the policy's promptFit needs to refuse a task at setup (train/prompt-fit.ts). Each
 * server says it its own way:
 *  - the context: vLLM, SGLang and `trace-rl serve` list `max_model_len` per model at `GET /v1/models`;
 *    llama.cpp's server gives `default_generation_settings.n_ctx` at `GET /props`;
 *  - the tokens: `POST /tokenize` at the server's root (vLLM, SGLang, llama.cpp, `trace-rl serve`), both
 *    field spellings sent (`prompt`/`add_special_tokens`, `content`/`add_special`), special tokens on, as
 *    a text prompt sent to /v1/completions is tokenised.
 * Every answer is a server's, so hostile: bounded in bytes and nesting, given 10 s, and read only where
 * it has the expected shape. A server that does not answer, or answers otherwise, says nothing
 * (undefined): the task is then not checked, never refused on a guess.
 */
import { serverRoot } from '../../tokens/server-tokenizer.ts';
import { readBoundedBody } from '../../util/bounded-body.ts';
import { jsonNestingPast } from '../../util/json-depth.ts';

/** How long one question to a server may take. */
const ASK_MS = 10_000;
/** Largest /v1/models or /props answer read (llama.cpp's /props carries the chat template). */
const INFO_BYTES = 1 << 20;
/** Deepest nesting read from an answer (these answers nest three or four levels). */
const MAX_DEPTH = 32;

export interface AskOptions {
  /** Sent as a Bearer token (the policy's own key). */
  apiKey: string;
  /** Largest /tokenize answer read (its id list grows with the prompt). */
  maxResponseBytes: number;
}

/** A JSON answer, or undefined for a failure of any kind; `status` is kept so a missing route can be told apart. */
async function ask(url: string, init: RequestInit, apiKey: string, maxBytes: number): Promise<{ status: number; json?: unknown }> {
  const signal = AbortSignal.timeout(ASK_MS);
  try {
    const res = await fetch(url, { ...init, headers: { ...init.headers, authorization: `Bearer ${apiKey}` }, signal, redirect: 'error' });
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined);
      return { status: res.status };
    }
    const body = await readBoundedBody(res, { maxBytes, refuse: () => new Error('too large'), signal });
    const text = new TextDecoder().decode(body);
    if (jsonNestingPast(text, MAX_DEPTH)) return { status: res.status };
    return { status: res.status, json: JSON.parse(text) as unknown };
  } catch {
    return { status: 0 };
  }
}

const positiveInt = (x: unknown): number | undefined => (typeof x === 'number' && Number.isSafeInteger(x) && x > 0 ? x : undefined);
const record = (x: unknown): Record<string, unknown> | undefined =>
  x !== null && typeof x === 'object' && !Array.isArray(x) ? (x as Record<string, unknown>) : undefined;

/** `max_model_len` of `model` in a /v1/models list; of the smallest listed when no entry has its id (a server serving under another name). */
export function contextInModels(answer: unknown, model: string): number | undefined {
  const data = record(answer)?.data;
  if (!Array.isArray(data)) return undefined;
  const listed: Array<{ id: unknown; len: number }> = [];
  for (const entry of data.slice(0, 1000)) {
    const len = positiveInt(record(entry)?.max_model_len);
    if (len !== undefined) listed.push({ id: record(entry)!.id, len });
  }
  const own = listed.find((e) => e.id === model);
  if (own) return own.len;
  return listed.length > 0 ? Math.min(...listed.map((e) => e.len)) : undefined;
}

/** The context one server reports for `model`: /v1/models' max_model_len, else llama.cpp's /props n_ctx. */
export async function servedContext(baseURL: string, model: string, apiKey: string): Promise<number | undefined> {
  const models = await ask(`${baseURL.replace(/\/+$/, '')}/models`, { method: 'GET' }, apiKey, INFO_BYTES);
  const listed = contextInModels(models.json, model);
  if (listed !== undefined) return listed;
  const props = await ask(`${serverRoot(baseURL)}/props`, { method: 'GET' }, apiKey, INFO_BYTES);
  return positiveInt(record(record(props.json)?.default_generation_settings)?.n_ctx);
}

/** The smallest context the servers report (a prompt must fit on whichever server it lands); undefined when none reports one. */
export async function smallestContext(baseURLs: readonly string[], model: string, apiKey: string): Promise<number | undefined> {
  const all = await Promise.all(baseURLs.map((u) => servedContext(u, model, apiKey)));
  const known = all.filter((n): n is number => n !== undefined);
  return known.length > 0 ? Math.min(...known) : undefined;
}

/**
 * Counts a text prompt's tokens with a server's /tokenize. A server without the route (404, 405) is
 * asked once: every later count is undefined without a request.
 */
export class TokenCounter {
  private noRoute = false;

  constructor(
    private readonly baseURL: string,
    private readonly model: string,
    private readonly options: AskOptions,
  ) {}

  async count(text: string): Promise<number | undefined> {
    if (this.noRoute) return undefined;
    const body = JSON.stringify({ model: this.model, prompt: text, content: text, add_special_tokens: true, add_special: true });
    const r = await ask(
      `${serverRoot(this.baseURL)}/tokenize`,
      { method: 'POST', headers: { 'content-type': 'application/json' }, body },
      this.options.apiKey,
      this.options.maxResponseBytes,
    );
    if (r.status === 404 || r.status === 405) this.noRoute = true;
    const tokens = record(r.json)?.tokens;
    return Array.isArray(tokens) ? tokens.length : undefined;
  }
}
