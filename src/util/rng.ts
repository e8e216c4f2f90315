/**
 * Seeded pseudo-random numbers (SplitMix32 → Mulberry32-style mixing). Library code takes an `Rng`
 * argument and never calls Math.random(), so a run is reproducible from its seed. `fork(label)` derives
 * an independent stream (for example one per rollout) without consuming the parent's sequence order.
 */
export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform integer in [0, n). */
  int(n: number): number;
  /** An independent generator derived from this one's seed and a label. */
  fork(label: string | number): Rng;
  readonly seed: number;
}

function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

function mix(x: number): number {
  x = (x + 0x9e3779b9) >>> 0;
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b) >>> 0;
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35) >>> 0;
  return (x ^ (x >>> 16)) >>> 0;
}

export function createRng(seed: number): Rng {
  return new SeededRng(seed >>> 0);
}

/**
 * A class rather than closures: the engine forks a generator per call, and an object with three
 * closures cost four allocations a fork where this costs one.
 */
class SeededRng implements Rng {
  private state: number;

  constructor(readonly seed: number) {
    this.state = mix(seed);
  }

  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  fork(label: string | number): Rng {
    return new SeededRng(mix(this.seed ^ hashString(String(label))));
  }
}

/** Fisher–Yates shuffle of a copy. */
export function shuffled<T>(items: readonly T[], rng: Rng): T[] {
  const out = items.slice();
  for (let i = out.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}
