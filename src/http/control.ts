import { randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { MiddlewareHandler } from 'hono';
import { escapeControl } from '../util/escape-control.ts';
import { UserError } from '../util/user-error.ts';
import { HttpError } from './errors.ts';

/**
 * Who may call a control route (`serve`'s `/reload`, the rollout's `/weights`): such a route makes a
 * server load any file it can read, or releases a training step. A web page can send a `text/plain`
 * POST to a loopback port without a preflight, and a DNS-rebound name reaches it as "same origin", so
 * a control route answers only a request that
 *  - carries no `Origin` (browsers send one; the trainers and curl do not), or one listed in `origins`;
 *  - names a loopback host (`localhost`, 127.0.0.0/8, ::1), the address the server is bound to, or a
 *    name listed in `hosts`, in its `Host` header;
 *  - has a JSON body (`content-type: application/json`);
 *  - sends the token as `Authorization: Bearer <token>`.
 */
export interface ControlAccess {
  token: string;
  /** Host names (no port) accepted besides the loopback ones and `boundHost`. */
  hosts?: readonly string[];
  /** The address the server listens on (accepted as a Host when it is not a wildcard). */
  boundHost?: string;
  /** Origins (`scheme://host:port`) accepted; none by default. */
  origins?: readonly string[];
}

/** A control token that could not be read. */
export class ControlTokenError extends UserError {
  override name = 'ControlTokenError';
}

/**
 * The token from `file` (its first line), or a new random one (`generated`: print it once, where the
 * operator sees it, and never store it).
 */
export function controlToken(file?: string): { token: string; generated: boolean } {
  if (file === undefined) return { token: randomBytes(24).toString('base64url'), generated: true };
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new ControlTokenError(`control token file ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  const token = text.split(/\r?\n/)[0]!.trim();
  if (token.length < 16) throw new ControlTokenError(`control token file ${file}: its first line must be a token of at least 16 characters`);
  return { token, generated: false };
}

const LOOPBACK = /^(?:localhost|127(?:\.\d{1,3}){3}|\[?::1\]?|\[?::ffff:127(?:\.\d{1,3}){3}\]?)$/i;

/** The host name of a Host header (`[::1]:8080` → `[::1]`, `localhost:80` → `localhost`). */
function hostName(header: string): string {
  const h = header.trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(0, h.indexOf(']') + 1);
  return h.replace(/:\d*$/, '').replace(/\.$/, '');
}

/** Middleware for control routes: 403 for a foreign Origin or Host, 415 for a non-JSON body, 401 without the token. */
export function controlGuard(access: ControlAccess): MiddlewareHandler {
  const refusal = localRequestCheck(access, {
    route: 'this control route',
    tokenHelp: 'the server\u2019s control token as Authorization: Bearer <token> (printed at start, or the --control-token-file given)',
  });
  return async (c, next) => {
    const refused = refusal(c.req.method, (name) => c.req.header(name));
    if (refused) throw refused;
    await next();
  };
}

/**
 * The same checks for any server meant for its local user (`trace-rl env serve` uses them on every
 * route and on the WebSocket upgrade): the refusal a request gets, or undefined. The token is checked
 * only when `access.token` is given; `words` name the route and where the token comes from.
 */
export function localRequestCheck(
  access: Omit<ControlAccess, 'token'> & { token?: string },
  words: { route: string; tokenHelp: string },
): (method: string, header: (name: string) => string | undefined) => HttpError | undefined {
  const expected = access.token === undefined ? undefined : Buffer.from(`Bearer ${access.token}`);
  const bound =
    access.boundHost && !['0.0.0.0', '::', '[::]'].includes(access.boundHost)
      ? hostName(access.boundHost.includes(':') && !access.boundHost.startsWith('[') ? `[${access.boundHost}]` : access.boundHost)
      : undefined;
  const hosts = new Set((access.hosts ?? []).map((h) => hostName(h)));
  const origins = new Set((access.origins ?? []).map((o) => o.replace(/\/+$/, '').toLowerCase()));
  return (method, header) => {
    const origin = header('origin');
    if (origin !== undefined && !origins.has(origin.replace(/\/+$/, '').toLowerCase()))
      return new HttpError(403, `requests from a web page (Origin ${escapeControl(origin.slice(0, 100))}) may not use ${words.route}`, 'foreign_origin');
    const host = hostName(header('host') ?? '');
    if (!(LOOPBACK.test(host) || host === bound || hosts.has(host)))
      return new HttpError(
        403,
        `Host ${escapeControl(host.slice(0, 100)) || '(none)'} is not this server's: call it at a loopback address, or allow the name (--allow-host)`,
        'foreign_host',
      );
    const type = (header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    if (method !== 'GET' && method !== 'HEAD' && type !== 'application/json')
      return new HttpError(
        415,
        `requests to ${words.route} are JSON: send content-type: application/json (got ${escapeControl(type.slice(0, 60)) || 'none'})`,
        'unsupported_media_type',
      );
    if (expected === undefined) return undefined;
    const given = Buffer.from(header('authorization') ?? '');
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      return new HttpError(401, `${words.route} needs ${words.tokenHelp}`, 'invalid_token');
    return undefined;
  };
}
