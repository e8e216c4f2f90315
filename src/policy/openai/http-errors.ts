/**
 * How the policy's HTTP client (json-post.ts) fails, apart from undici itself, so that code which only
 * classifies a failure (src/cli/server-failure.ts) does not load the client and its connection pool.
 */
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
