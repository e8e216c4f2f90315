/**
 * JSON over HTTP for server environments, with every answer bounded: the body is read in chunks and
 * refused past the limit (declared or not), and the whole exchange past the timeout. A request that
 * never reached the server (refused, reset, timed out) is a SessionLost; an HTTP error status is the
 * server's refusal (RemoteServerError, with its `detail` or `error` text).
 */
import { complaint, MAX_JSON_DEPTH, parseServerJson, RemoteProtocolError, RemoteServerError } from './reply.ts';
import { jsonNestingPast } from '../../util/json-depth.ts';
import { authHeaders, ServerTimedOut, SessionLost, type RemoteLimits } from './session.ts';
import { readBoundedBody } from '../../util/bounded-body.ts';

export async function getJson(url: string, limits: RemoteLimits, where: string, signal?: AbortSignal): Promise<unknown> {
  return exchange(url, { method: 'GET', headers: authHeaders(limits) }, limits, where, signal);
}

export async function postJson(url: string, body: unknown, limits: RemoteLimits, where: string, signal?: AbortSignal): Promise<unknown> {
  return exchange(
    url,
    { method: 'POST', headers: { 'content-type': 'application/json', ...authHeaders(limits) }, body: JSON.stringify(body) },
    limits,
    where,
    signal,
  );
}

/** An HTTP status the server answered with (for callers that tolerate one, e.g. a missing /close). */
export class HttpStatusError extends RemoteServerError {
  constructor(
    message: string,
    readonly status: number,
    /** The body's own code where it gave one (CAPACITY_REACHED), else `http_<status>`. */
    code = `http_${status}`,
  ) {
    super(message, code);
  }
}

async function exchange(url: string, init: RequestInit, limits: RemoteLimits, where: string, signal?: AbortSignal): Promise<unknown> {
  const timeout = AbortSignal.timeout(limits.timeoutMs);
  const any = signal ? AbortSignal.any([timeout, signal]) : timeout;
  const path = new URL(url).pathname;
  let res: Response;
  try {
    res = await fetch(url, { ...init, signal: any, redirect: 'error' });
  } catch (e) {
    if (signal?.aborted) throw signal.reason;
    if (timeout.aborted) throw new ServerTimedOut(`${where}: ${init.method} ${path}: no answer within ${limits.timeoutMs} ms (env.timeoutMs)`);
    throw new SessionLost(`${where}: ${init.method} ${path}: ${causeOf(e)}`);
  }
  let text: string;
  try {
    text = await boundedText(res, limits.maxReplyBytes, `${where}: ${init.method} ${path}`, any);
  } catch (e) {
    if (signal?.aborted) throw signal.reason;
    if (timeout.aborted)
      throw new ServerTimedOut(`${where}: ${init.method} ${path}: the answer did not arrive whole within ${limits.timeoutMs} ms (env.timeoutMs)`);
    throw e;
  }
  if (!res.ok) {
    let detail = text;
    let code: string | undefined;
    try {
      if (jsonNestingPast(text, MAX_JSON_DEPTH)) throw new Error('too deep');
      const j = JSON.parse(text) as { detail?: unknown; error?: unknown; code?: unknown };
      const d = j.detail ?? j.error;
      if (d !== undefined) detail = typeof d === 'string' ? d : JSON.stringify(d);
      // A full server says so by code (trace-rl env serve's /create past its cap), as OpenEnv's frame does.
      if (j.code === 'CAPACITY_REACHED') code = j.code;
    } catch {
      // not JSON: the text itself
    }
    throw new HttpStatusError(`${where}: ${init.method} ${path} answered HTTP ${res.status}: ${complaint(detail)}`, res.status, code);
  }
  return parseServerJson(text, `${where}: ${init.method} ${path}`);
}

function causeOf(e: unknown): string {
  const cause = (e as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (e as Error).message;
}

/** The body as text, refused past `maxBytes` (a declared length is checked before reading). */
async function boundedText(res: Response, maxBytes: number, where: string, signal: AbortSignal): Promise<string> {
  const refuse = (n: number) => new RemoteProtocolError(`${where}: the answer is larger than ${maxBytes} bytes (${n} so far; env.maxReplyBytes); refused`);
  return Buffer.from(await readBoundedBody(res, { maxBytes, refuse, signal })).toString('utf8');
}
