/**
 * Python's `random.Random(seed)` for an int seed: the Mersenne Twister MT19937 seeded with
 * init_by_array over the seed's 32-bit words, `randint` by rejection sampling on getrandbits, and
 * `random()` with 53 bits. BFCL's APIs draw ids, tokens and sensor readings from it, so the same
 * seed must give the same numbers as CPython.
 */
const N = 624;
const M = 397;

export class PyRandom {
  private readonly mt = new Uint32Array(N);
  private index = N + 1;

  constructor(seed: bigint) {
    let key = seed < 0n ? -seed : seed;
    const words: number[] = [];
    while (key > 0n) {
      words.push(Number(key & 0xffffffffn));
      key >>= 32n;
    }
    if (words.length === 0) words.push(0);
    this.initByArray(words);
  }

  private initGenrand(s: number): void {
    const mt = this.mt;
    mt[0] = s >>> 0;
    for (let i = 1; i < N; i++) {
      const prev = (mt[i - 1] as number) ^ ((mt[i - 1] as number) >>> 30);
      mt[i] = (Math.imul(1812433253, prev) + i) >>> 0;
    }
    this.index = N;
  }

  private initByArray(key: number[]): void {
    const mt = this.mt;
    this.initGenrand(19650218);
    let i = 1;
    let j = 0;
    for (let k = Math.max(N, key.length); k > 0; k--) {
      const prev = (mt[i - 1] as number) ^ ((mt[i - 1] as number) >>> 30);
      mt[i] = (((mt[i] as number) ^ Math.imul(prev, 1664525)) + (key[j] as number) + j) >>> 0;
      i++;
      j++;
      if (i >= N) {
        mt[0] = mt[N - 1] as number;
        i = 1;
      }
      if (j >= key.length) j = 0;
    }
    for (let k = N - 1; k > 0; k--) {
      const prev = (mt[i - 1] as number) ^ ((mt[i - 1] as number) >>> 30);
      mt[i] = (((mt[i] as number) ^ Math.imul(prev, 1566083941)) - i) >>> 0;
      i++;
      if (i >= N) {
        mt[0] = mt[N - 1] as number;
        i = 1;
      }
    }
    mt[0] = 0x80000000;
  }

  /** The next 32-bit output. */
  uint32(): number {
    const mt = this.mt;
    if (this.index >= N) {
      for (let k = 0; k < N; k++) {
        const y = ((mt[k] as number) & 0x80000000) | ((mt[(k + 1) % N] as number) & 0x7fffffff);
        mt[k] = (mt[(k + M) % N] as number) ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0);
      }
      this.index = 0;
    }
    let y = mt[this.index++] as number;
    y ^= y >>> 11;
    y = (y ^ ((y << 7) & 0x9d2c5680)) >>> 0;
    y = (y ^ ((y << 15) & 0xefc60000)) >>> 0;
    y ^= y >>> 18;
    return y >>> 0;
  }

  /** getrandbits(k) */
  getrandbits(k: number): bigint {
    if (k <= 32) return BigInt(this.uint32() >>> (32 - k));
    let out = 0n;
    let shift = 0n;
    let left = k;
    while (left > 0) {
      let r = this.uint32();
      if (left < 32) r >>>= 32 - left;
      out |= BigInt(r) << shift;
      shift += 32n;
      left -= 32;
    }
    return out;
  }

  /** randint(a, b): a + _randbelow(b - a + 1). */
  randint(a: bigint, b: bigint): bigint {
    const n = b - a + 1n;
    const k = n.toString(2).length;
    let r = this.getrandbits(k);
    while (r >= n) r = this.getrandbits(k);
    return a + r;
  }

  /** random(): a float in [0, 1) from 53 bits. */
  random(): number {
    const a = this.uint32() >>> 5;
    const b = this.uint32() >>> 6;
    return (a * 67108864 + b) / 9007199254740992;
  }

  /** uniform(a, b) = a + (b - a) * random() */
  uniform(a: number, b: number): number {
    return a + (b - a) * this.random();
  }
}
