import type { Context, Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { z } from 'zod';

/**
 * Every error a trace-rl server sends has one JSON shape (OpenAI's, so OpenAI clients show the
 * message): `{"error": {"message", "type", "code", "param"}}`. `code` names the limit or problem
 * (`body_too_large`, `too_many_queries`, …) so a client can react without parsing the message.
 */
export interface ErrorBody {
  error: { message: string; type: 'invalid_request_error' | 'not_found_error' | 'server_error' | 'upstream_error'; code: string | null; param: string | null };
}

/** An error a handler throws to answer with a given status and JSON body. */
export class HttpError extends Error {
  override name = 'HttpError';
  constructor(
    readonly status: ContentfulStatusCode,
    message: string,
    readonly code: string | null = null,
    readonly param: string | null = null,
  ) {
    super(message);
  }
}

/** 413 naming the limit and the setting that raises it. */
export function tooLarge(what: string, limit: number, unit: string, setting: string, code: string): HttpError {
  return new HttpError(413, `${what} exceeds the limit of ${limit.toLocaleString('en')} ${unit} (${setting})`, code);
}

export function errorBody(status: number, message: string, code: string | null = null, param: string | null = null): ErrorBody {
  const type =
    status === 404 ? 'not_found_error' : status === 502 || status === 504 ? 'upstream_error' : status >= 500 ? 'server_error' : 'invalid_request_error';
  return { error: { message, type, code, param } };
}

/** Formats a zod error as one line: `field.path: message; …`. */
export function zodMessage(e: z.ZodError): string {
  return e.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ');
}

/**
 * Installs the JSON 404 and the JSON error handler: HttpError keeps its status, invalid JSON and
 * schema errors are 400, `badRequest(e)` lets a server mark its own 400s, anything else is a 500
 * with the message (never an HTML page or a stack trace).
 */
export function jsonErrors(app: Hono<any>, options: { badRequest?: (e: Error) => boolean } = {}): void {
  app.notFound((c) => c.json(errorBody(404, `no route ${c.req.method} ${c.req.path}`, 'not_found'), 404));
  app.onError((e, c: Context) => {
    if (e instanceof HttpError) return c.json(errorBody(e.status, e.message, e.code, e.param), e.status);
    if (e instanceof HTTPException) return c.json(errorBody(e.status, e.message || 'request failed'), e.status);
    if (e instanceof z.ZodError) return c.json(errorBody(400, zodMessage(e), 'invalid_body'), 400);
    if (e instanceof SyntaxError || options.badRequest?.(e)) return c.json(errorBody(400, e.message, 'invalid_body'), 400);
    return c.json(errorBody(500, e.message || String(e), 'internal'), 500);
  });
}
