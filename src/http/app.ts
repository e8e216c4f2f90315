import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { z } from 'zod';
import { HttpError, jsonErrors, tooLarge, zodMessage } from './errors.ts';

export interface ServerAppOptions {
  /** Largest request body in bytes; larger bodies get a 413 before they are parsed. */
  maxBodyBytes: number;
  /** How a user raises the body limit (named in the 413), e.g. `--max-body-bytes`. */
  bodySetting: string;
  /** Extra fields for `GET /health` (always `{"status": "ok", …}`). */
  health?: () => Record<string, unknown>;
  /** Errors of the server's own that mean a bad request (400) rather than a server fault. */
  badRequest?: (e: Error) => boolean;
}

/**
 * The base of every trace-rl HTTP service: a body-size limit on every route (checked while the body
 * streams in, so an oversized upload is never held in memory), `GET /health`, a JSON 404 and JSON
 * errors. Services add their routes to the returned app and start it with `listen()`.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the caller picks the app's bindings
export function createServerApp<E extends object = any>(options: ServerAppOptions): Hono<E> {
  const app = new Hono();
  app.use(
    '*',
    bodyLimit({
      maxSize: options.maxBodyBytes,
      onError: () => {
        throw tooLarge('request body', options.maxBodyBytes, 'bytes', options.bodySetting, 'body_too_large');
      },
    }),
  );
  app.get('/health', (c) => c.json({ status: 'ok', ...(options.health?.() ?? {}) }));
  jsonErrors(app, { badRequest: options.badRequest });
  return app as never;
}

/** Reads the body as JSON and validates it: 400 naming the field on any problem. */
export async function readJson<T>(c: Pick<Context, 'req'>, schema: z.ZodType<T>): Promise<T> {
  let raw: unknown;
  try {
    raw = await c.req.json();
  } catch (e) {
    if (e instanceof HttpError) throw e;
    throw new HttpError(400, 'body is not valid JSON', 'invalid_json');
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new HttpError(400, zodMessage(parsed.error), 'invalid_body');
  return parsed.data;
}

/** Lets the event loop run (health checks, signals, other requests) between chunks of heavy work. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
