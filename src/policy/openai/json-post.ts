/**
 * The policy's HTTP client: one JSON POST over a keep-alive connection pool per server (undici's Pool,
 * through its lowest-level call, `dispatch`, with a handler of our own: no streams, no request or
 * response objects), with the caller's signal as its only abort (watched through util/abort-watch.ts:
 * no listener of its own a call). At fleet scale the client's CPU per request is what bounds a rollout
 * process: the openai SDK over `fetch` cost
 * several times a bare keep-alive loop, node:http with its own signal option 30–60 µs a request more,
 * and node:http with one listener of ours still 1.4× the bare node:http loop (bench/scale,
 * `bare-client`). Errors keep the SDK's meanings so `toPolicyError` classifies them as before: a status
 * with the server's message (`HttpStatusError`, worded as the SDK did), a connection failure with the
 * system's code (`ConnectionError`), an oversized body (`ResponseTooLargeError`), bad JSON (`SyntaxError`).
 */
import { Pool, type Dispatcher } from 'undici';
import { responseTooLarge } from './bounded-fetch.ts';
import { ConnectionError, HttpStatusError } from './http-errors.ts';
import { unwatchAbort, watchAbort, type AbortWatcher } from '../../util/abort-watch.ts';

/**
 * One pool per server origin, shared by every policy of the process: the engine's semaphore bounds the
 * requests in flight, so the pools need no cap of their own, and connections stay open between a
 * trajectory's turns (closed after 4 s idle, or sooner when the server's keep-alive hint says). No
 * header or body timeout of undici's own: the engine times every call (engine.timeoutMs aborts its signal).
 */
const pools = new Map<string, Pool>();

function poolFor(origin: string): Pool {
  let pool = pools.get(origin);
  if (!pool) pools.set(origin, (pool = new Pool(origin, { headersTimeout: 0, bodyTimeout: 0 })));
  return pool;
}

export interface JsonPostOptions {
  apiKey: string;
  maxResponseBytes: number;
}

/** POSTs JSON to `<baseURL><path>` and returns the parsed 2xx body. */
export class JsonPost {
  private readonly origin: string;
  private readonly basePath: string;
  private readonly search: string;
  private readonly headers: Record<string, string>;

  constructor(
    baseURL: string,
    private readonly options: JsonPostOptions,
  ) {
    const url = new URL(baseURL.endsWith('/') ? baseURL : `${baseURL}/`);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new RangeError(`OpenAIPolicy: ${baseURL} is not an http(s) URL`);
    this.origin = url.origin;
    this.basePath = url.pathname;
    this.search = url.search;
    this.headers = { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${options.apiKey}`, 'user-agent': 'trace-rl' };
  }

  /** `path` is relative to the base URL ('completions', 'chat/completions'). */
  post(path: string, body: unknown, signal?: AbortSignal): Promise<unknown> {
    return this.postJsonText(path, JSON.stringify(body), signal);
  }

  /** As post, with the body already written as JSON text (the caller vouches that it is JSON). */
  postJsonText(path: string, payload: string, signal?: AbortSignal): Promise<unknown> {
    if (signal?.aborted) return Promise.reject(abortError(signal));
    return new Promise((resolve, reject) => {
      const call = new PostCall(this.options.maxResponseBytes, signal, resolve, reject);
      try {
        poolFor(this.origin).dispatch({ path: this.basePath + path + this.search, method: 'POST', headers: this.headers, body: payload }, call);
      } catch (e) {
        call.onError(e as Error); // a request undici refuses outright (it reports most failures to the handler)
      }
    });
  }
}

/**
 * One request's handler: collects the body (refused past the ceiling, declared or streamed, without
 * reading it whole) and settles once, by the answer, a failure, or the caller's signal.
 *
 * It speaks undici 7's own handler interface (onConnect, onHeaders, onData, onComplete, onError), the one
 * its client calls, which the types mark deprecated in favour of onRequestStart … onResponseError. A
 * handler of the newer kind is wrapped per request in two more objects, and each answer's raw headers
 * and trailers are parsed into objects for it, about 1 KB and several µs a request at thousands of
 * requests a second, for the one header read here (content-length). A newer undici that drops this
 * interface fails the json-post tests at once.
 */
class PostCall implements Dispatcher.DispatchHandler, AbortWatcher {
  private abort: ((reason?: Error) => void) | undefined;
  private status = 0;
  private readonly chunks: Buffer[] = [];
  private seen = 0;
  private settled = false;

  constructor(
    private readonly maxBytes: number,
    private readonly signal: AbortSignal | undefined,
    private readonly resolve: (value: unknown) => void,
    private readonly reject: (reason: unknown) => void,
  ) {
    if (signal) watchAbort(signal, this);
  }

  /** The abort ends the request wherever it is (queued, waiting for the head, half-way through the body). */
  onSignalAbort(): void {
    this.fail(abortError(this.signal!), true);
  }

  onConnect(abort: (reason?: Error) => void): void {
    this.abort = abort;
    if (this.settled) abort(new Error('the call already ended'));
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[] | string[] | null): boolean {
    this.status = statusCode;
    const declared = contentLength(rawHeaders);
    if (declared !== undefined && declared > this.maxBytes) this.fail(responseTooLarge(this.maxBytes, declared, true), true);
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.settled) return true;
    this.seen += chunk.length;
    if (this.seen > this.maxBytes) this.fail(responseTooLarge(this.maxBytes, this.seen, false), true);
    else this.chunks.push(chunk);
    return true;
  }

  onComplete(): void {
    if (this.settled) return;
    const { chunks } = this;
    const text = chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
    if (this.status < 200 || this.status >= 300) return this.fail(statusError(this.status, text), false);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (e) {
      return this.fail(e, false);
    }
    this.end();
    this.resolve(parsed);
  }

  onError(error: Error): void {
    this.fail(this.signal?.aborted ? abortError(this.signal) : connectionError(error), false);
  }

  /** Settles with `error`; `stop` also aborts the request (its connection is closed, not left to the server). */
  private fail(error: unknown, stop: boolean): void {
    if (!this.end()) return;
    if (stop) this.abort?.(error instanceof Error ? error : new Error(String(error)));
    this.reject(error);
  }

  /** True the first time: the call ends now (it stops watching its signal); false after. */
  private end(): boolean {
    if (this.settled) return false;
    this.settled = true;
    if (this.signal) unwatchAbort(this.signal, this);
    return true;
  }
}

/** The declared content-length among raw headers (name, value, name, value, …), when there is a number. */
function contentLength(raw: Buffer[] | string[] | null): number | undefined {
  if (!raw) return undefined;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length !== 14 || name.toString().toLowerCase() !== 'content-length') continue;
    const n = Number(raw[i + 1]!.toString());
    return Number.isFinite(n) ? n : undefined;
  }
  return undefined;
}

/** As the openai SDK worded a status: the server's `error.message`, else its JSON, else its text. */
function statusError(status: number, text: string): HttpStatusError {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const error = json !== undefined && typeof json === 'object' && json !== null ? (json as { error?: unknown }).error : undefined;
  const inner = error && typeof error === 'object' ? (error as { message?: unknown }).message : undefined;
  const msg = inner ? (typeof inner === 'string' ? inner : JSON.stringify(inner)) : error ? JSON.stringify(error) : json === undefined ? text : undefined;
  return new HttpStatusError(status, msg ? `${status} ${msg}` : `${status} status code (no body)`);
}

/** What an aborted call rejects with: named AbortError (as fetch and node:http name it), the signal's reason as its cause. */
function abortError(signal: AbortSignal): Error {
  const e = new Error('The operation was aborted', { cause: signal.reason });
  e.name = 'AbortError';
  return e;
}

function connectionError(e: unknown): unknown {
  if (!(e instanceof Error) || e.name === 'AbortError' || e instanceof ConnectionError) return e;
  const timedOut = (e as NodeJS.ErrnoException).code === 'ETIMEDOUT' || /timed? ?out/i.test(e.message);
  return new ConnectionError(timedOut ? 'Request timed out.' : 'Connection error.', timedOut, { cause: e });
}
