/**
 * The fetch the OpenAI client uses, with a ceiling on what a server may send: the client reads a
 * response body whole, so a server that answers with gigabytes (a bug, a proxy's error page looping,
 * a hostile endpoint) would otherwise be held in memory until the call's timeout. Time is bounded by
 * the engine (engine.timeoutMs aborts the call's signal, which also stops the body's reading).
 */

/** The largest response body accepted: far above a long completion with per-token log-probabilities. */
export const MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

/** A server sent more than the ceiling; the call fails as unusable data (parse_error), not as a crash. */
export class ResponseTooLargeError extends Error {
  override name = 'ResponseTooLargeError';
}

/** The one wording of a refused body, for this fetch and the policy's own HTTP client (json-post.ts). */
export function responseTooLarge(maxBytes: number, n: number, declared: boolean): ResponseTooLargeError {
  return new ResponseTooLargeError(
    `the server sent more than ${maxBytes} bytes (${n}${declared ? ' declared' : ' so far'}); refused: check the server and the request's max_tokens`,
  );
}

type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** `inner` with every response body cut off (an error) past `maxBytes`. */
export function boundedFetch(maxBytes: number = MAX_RESPONSE_BYTES, inner: Fetch = fetch): Fetch {
  return async (input, init) => {
    const res = await inner(input, init);
    if (!res.body) return res;
    const declared = Number(res.headers.get('content-length') ?? NaN);
    const tooLarge = (n: number) => responseTooLarge(maxBytes, n, Number.isFinite(declared));
    if (Number.isFinite(declared) && declared > maxBytes) {
      await res.body.cancel().catch(() => {});
      throw tooLarge(declared);
    }
    let seen = 0;
    const limited = res.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          seen += chunk.byteLength;
          if (seen > maxBytes) controller.error(tooLarge(seen));
          else controller.enqueue(chunk);
        },
      }),
    );
    return new Response(limited, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}
