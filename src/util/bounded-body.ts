/**
 * The one way this project reads a peer's HTTP response body: at most `maxBytes`, the declared length
 * checked before anything is read, then what arrives counted chunk by chunk, so a server that sends
 * gigabytes (or never stops) is refused before its body is held in memory.
 */

export interface BodyBound {
  maxBytes: number;
  /** The error to throw past the bound: `n` bytes declared (`declared`) or seen so far. */
  refuse: (n: number, declared: boolean) => Error;
  /** Keep what came up to the bound instead of refusing (an error page, shown cut anyway). */
  cut?: boolean;
  /**
   * The call's deadline. A body that drips past it is cancelled here, whatever the HTTP client does with
   * the request's own signal once the headers have arrived, and the signal's reason is thrown.
   */
  signal?: AbortSignal;
}

export async function readBoundedBody(res: Response, { maxBytes, refuse, cut = false, signal }: BodyBound): Promise<Uint8Array> {
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (!cut && Number.isFinite(declared) && declared > maxBytes) {
    await res.body?.cancel().catch(() => undefined);
    throw refuse(declared, true);
  }
  if (!res.body) return new Uint8Array(0);
  const reader = res.body.getReader();
  const stop = () => void reader.cancel(signal?.reason).catch(() => undefined);
  signal?.addEventListener('abort', stop, { once: true });
  try {
    return await readUpTo(reader, maxBytes, refuse, cut, signal);
  } finally {
    signal?.removeEventListener('abort', stop);
  }
}

async function readUpTo(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  maxBytes: number,
  refuse: BodyBound['refuse'],
  cut: boolean,
  signal: AbortSignal | undefined,
): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  let seen = 0;
  if (signal?.aborted) throw signal.reason;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    seen += value.byteLength;
    if (seen > maxBytes) {
      await reader.cancel().catch(() => undefined);
      if (!cut) throw refuse(seen, false);
      parts.push(value.subarray(0, value.byteLength - (seen - maxBytes)));
      break;
    }
    parts.push(value);
  }
  // A read cancelled at the deadline ends like a finished body: the deadline, not a cut answer, is why.
  if (signal?.aborted) throw signal.reason;
  return Buffer.concat(parts);
}
