/**
 * Deterministic string hashing for feature hashing. FNV-1a (32-bit) over UTF-16 code units, seeded by
 * a namespace string, so the same word in two namespaces ("question mentions X" vs "searched X") lands
 * on independent buckets. No dependence on Map/Set iteration order or on the process: a feature's
 * index is a pure function of (namespace, token, bits).
 */

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** FNV-1a of `s`, continuing from state `h` (start from {@link FNV_OFFSET} or a namespace's state). */
export function fnv1a(s: string, h: number = FNV_OFFSET): number {
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, FNV_PRIME);
  }
  return h >>> 0;
}

/** Final avalanche (murmur3 fmix32): FNV's low bits are weak, and we take the low bits as the index. */
export function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A namespace's seed state: hashing `token` under it equals fnv1a(namespace + '\u0001' + token). */
export function namespaceSeed(namespace: string): number {
  return fnv1a(`${namespace}\u0001`);
}

/** Hash of `token` in a namespace, mixed: use the low bits for the bucket, the top bit for the sign. */
export function hashToken(seed: number, token: string): number {
  return fmix32(fnv1a(token, seed));
}
