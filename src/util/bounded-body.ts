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
}

export async function readBoundedBody(res: Response, { maxBytes, refuse, cut = false }: BodyBound): Promise<Uint8Array> {
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (!cut && Number.isFinite(declared) && declared > maxBytes) {
    await res.body?.cancel().catch(() => undefined);
    throw refuse(declared, true);
  }
  if (!res.body) return new Uint8Array(0);
  const parts: Uint8Array[] = [];
  let seen = 0;
  const reader = res.body.getReader();
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
  return Buffer.concat(parts);
}
