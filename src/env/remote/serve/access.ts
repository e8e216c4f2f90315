/**
 * Who may use `trace-rl env serve`: its local user, not any web page the user has open. The checks are
 * the control routes' (src/http/control.ts): a request with a foreign `Origin` (cross-site WebSocket
 * hijacking, a page's fetch) or a foreign `Host` (DNS rebinding) is refused with 403, a POST that is
 * not JSON (a `text/plain` form a page sends without a preflight) with 415, and, when the server was
 * started with a token, a request without `Authorization: Bearer <token>` with 401. They run before
 * any route, on plain requests and on the WebSocket upgrade alike. Refusals answer FastAPI's shape,
 * `{"detail": "..."}`, which both protocols' clients read.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { HttpError } from '../../../http/errors.ts';
import { localRequestCheck } from '../../../http/control.ts';

export interface ServeAccess {
  /** Required as `Authorization: Bearer <token>` when given. */
  token?: string;
  /** Host names accepted besides the loopback ones and the bound address (--allow-host). */
  hosts?: readonly string[];
  /** The address the server listens on. */
  boundHost?: string;
}

/** The refusal a request gets, or undefined when it may go on. */
export function serveAccessCheck(access: ServeAccess): (req: IncomingMessage) => HttpError | undefined {
  const check = localRequestCheck(access, {
    route: 'this environment server',
    tokenHelp: 'its token as Authorization: Bearer <token> (the --token-file it was started with; env.tokenFile for a run)',
  });
  return (req) =>
    check(req.method ?? 'GET', (name) => {
      const v = req.headers[name];
      return Array.isArray(v) ? v[0] : v;
    });
}

export function refuseRequest(res: ServerResponse, refusal: HttpError): void {
  res.writeHead(refusal.status, { 'content-type': 'application/json' }).end(JSON.stringify({ detail: refusal.message }));
}

/** A refused WebSocket upgrade: the HTTP status and the same body, then the socket ends. */
export function refuseUpgrade(socket: Duplex, refusal: HttpError): void {
  const body = JSON.stringify({ detail: refusal.message });
  socket.end(
    `HTTP/1.1 ${refusal.status} ${refusal.status === 401 ? 'Unauthorized' : refusal.status === 415 ? 'Unsupported Media Type' : 'Forbidden'}\r\n` +
      `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}
