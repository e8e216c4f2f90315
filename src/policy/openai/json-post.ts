/**
 * The policy's HTTP client: one JSON POST over a shared keep-alive socket pool (node:http / node:https),
 * with the caller's signal as its only abort (one listener a call). At fleet scale the client's CPU per request is what
 * bounds a rollout process, and the general-purpose path (the openai SDK over `fetch`: request and
 * header objects, web streams, its own abort controller and timeout per call, the body piped through
 * a size-limiting stream) cost several times a bare keep-alive loop (bench/scale). Errors keep the
 * SDK's meanings so `toPolicyError` classifies them as before: a status with the server's message
 * (`HttpStatusError`, worded as the SDK did), a connection failure with the system's code
 * (`ConnectionError`), an oversized body (`ResponseTooLargeError`), bad JSON (`SyntaxError`).
 */
import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { responseTooLarge } from './bounded-fetch.ts';

/** The server answered with a non-2xx status; `message` reads as the openai SDK's ("500 internal error"). */
export class HttpStatusError extends Error {
  override name = 'HttpStatusError';
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** No answer could be had: refused, reset, unreachable, timed out at the socket. */
export class ConnectionError extends Error {
  override name = 'ConnectionError';
  constructor(
    message: string,
    readonly timedOut: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * Shared by every policy of the process: the engine's semaphore bounds the requests in flight, so the
 * pools need no cap of their own, and sockets stay open between a trajectory's turns.
 */
const agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };

export interface JsonPostOptions {
  apiKey: string;
  maxResponseBytes: number;
}

/** POSTs JSON to `<baseURL><path>` and returns the parsed 2xx body. */
export class JsonPost {
  private readonly url: URL;
  private readonly headers: Record<string, string>;
  private readonly request: typeof httpRequest;
  private readonly agent: HttpAgent;

  constructor(
    baseURL: string,
    private readonly options: JsonPostOptions,
  ) {
    this.url = new URL(baseURL.endsWith('/') ? baseURL : `${baseURL}/`);
    const https = this.url.protocol === 'https:';
    if (!https && this.url.protocol !== 'http:') throw new RangeError(`OpenAIPolicy: ${baseURL} is not an http(s) URL`);
    this.request = https ? httpsRequest : httpRequest;
    this.agent = https ? agents.https : agents.http;
    this.headers = { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${options.apiKey}`, 'user-agent': 'trace-rl' };
  }

  /** `path` is relative to the base URL ('completions', 'chat/completions'). */
  async post(path: string, body: unknown, signal?: AbortSignal): Promise<unknown> {
    // A string body: node:http sends the head and a string body in one socket write, a Buffer in two.
    const payload = JSON.stringify(body);
    if (signal?.aborted) throw abortError(signal);
    // The signal is watched here, not handed to http.request: node:http ties a signal to the request
    // through its end-of-stream helper (several listeners on the request and the socket each call),
    // which measured 30–60 µs a request, a third to half again a bare keep-alive request's whole cost
    // (bench/scale, `--modes bare,bare-signal`). One listener on the call's own signal does the same: it destroys the request,
    // or the response being read.
    const live: { req?: ClientRequest; res?: IncomingMessage } = {};
    const onAbort = () => {
      const e = abortError(signal!);
      live.req?.destroy(e);
      live.res?.destroy(e);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      let res: IncomingMessage;
      try {
        res = live.res = await this.send(path, payload, live, true);
      } catch (e) {
        throw connectionError(signal?.aborted ? abortError(signal) : e);
      }
      const text = await this.read(res).catch((e: unknown) => {
        throw signal?.aborted ? abortError(signal) : e;
      });
      if (res.statusCode! < 200 || res.statusCode! >= 300) throw statusError(res.statusCode!, text);
      return JSON.parse(text) as unknown;
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  private send(path: string, payload: string, live: { req?: ClientRequest }, retryReused: boolean): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      const req = (live.req = this.request(
        {
          protocol: this.url.protocol,
          hostname: this.url.hostname,
          port: this.url.port,
          path: this.url.pathname + path + this.url.search,
          method: 'POST',
          agent: this.agent,
          headers: { ...this.headers, 'content-length': Buffer.byteLength(payload) },
        },
        resolve,
      ));
      req.once('error', (e: NodeJS.ErrnoException) => {
        // A kept-alive socket the server closed while idle fails at once, before the server saw
        // the request: send it again on a fresh socket rather than count a server failure.
        if (retryReused && req.reusedSocket && (e.code === 'ECONNRESET' || e.code === 'EPIPE') && e.name !== 'AbortError')
          this.send(path, payload, live, false).then(resolve, reject);
        else reject(e);
      });
      req.end(payload);
    });
  }

  /** The body as text, refused past the ceiling (declared or streamed) without reading it whole. */
  private read(res: IncomingMessage): Promise<string> {
    const max = this.options.maxResponseBytes;
    const declared = Number(res.headers['content-length'] ?? NaN);
    if (Number.isFinite(declared) && declared > max) {
      res.destroy();
      return Promise.reject(responseTooLarge(max, declared, true));
    }
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let seen = 0;
      res.on('data', (chunk: Buffer) => {
        seen += chunk.length;
        if (seen > max) {
          res.destroy();
          reject(responseTooLarge(max, seen, false));
        } else chunks.push(chunk);
      });
      res.once('end', () => resolve(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8')));
      res.once('error', (e) => reject(connectionError(e)));
      res.once('close', () => {
        if (!res.complete) reject(new ConnectionError('Connection error.', false, { cause: new Error('the server closed the connection mid-response') }));
      });
    });
  }
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
