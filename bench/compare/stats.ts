/** Mean ± spread over seeds, and the per-run numbers the benchmark compares. */

export interface Spread {
  mean: number;
  /** Sample standard deviation over seeds (0 for one seed). */
  sd: number;
  min: number;
  max: number;
  n: number;
}

export function spread(xs: readonly number[]): Spread {
  const v = xs.filter((x) => Number.isFinite(x));
  const n = v.length;
  if (n === 0) return { mean: NaN, sd: NaN, min: NaN, max: NaN, n: 0 };
  const mean = v.reduce((a, b) => a + b, 0) / n;
  const sd = n > 1 ? Math.sqrt(v.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1)) : 0;
  return { mean, sd, min: Math.min(...v), max: Math.max(...v), n };
}

export function meanOf(xs: readonly number[]): number {
  const v = xs.filter((x) => Number.isFinite(x));
  return v.length ? v.reduce((a, b) => a + b, 0) / v.length : NaN;
}

/** "0.612 ± 0.031 [0.58–0.65]" with `digits` decimals (or percentages with pct). */
export function fmt(s: Spread, digits = 3, pct = false): string {
  if (s.n === 0) return '–';
  const f = (x: number) => (pct ? (100 * x).toFixed(Math.max(0, digits - 2)) : Math.abs(x) >= 1000 ? Math.round(x).toLocaleString('en-US') : x.toFixed(digits));
  return `${f(s.mean)} ± ${f(s.sd)} [${f(s.min)}–${f(s.max)}]${pct ? ' %' : ''}`;
}

/** xorshift32 in [0, 1): a fixed, dependency-free stream for bootstrap resampling, so tables are reproducible. */
export function resampleStream(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 4294967296;
  };
}

/**
 * Paired difference a − b over seeds (same seed in both arms): its mean and a 95 % percentile
 * bootstrap interval (resampling seeds with replacement, `resamples` times, seeded so tables are
 * reproducible). Pairs with a missing side are dropped.
 */
export function pairedBootstrap(
  a: ReadonlyMap<number, number>,
  b: ReadonlyMap<number, number>,
  resamples = 10_000,
  seed = 1,
): { mean: number; lo: number; hi: number; n: number } {
  const d = [...a].flatMap(([s, x]) => (b.has(s) && Number.isFinite(x) && Number.isFinite(b.get(s)!) ? [x - b.get(s)!] : []));
  const n = d.length;
  if (n === 0) return { mean: NaN, lo: NaN, hi: NaN, n };
  const mean = d.reduce((x, y) => x + y, 0) / n;
  const next = resampleStream(seed);
  const means = new Float64Array(resamples);
  for (let r = 0; r < resamples; r++) {
    let s = 0;
    for (let i = 0; i < n; i++) s += d[Math.floor(next() * n)]!;
    means[r] = s / n;
  }
  means.sort();
  return { mean, lo: means[Math.floor(0.025 * resamples)]!, hi: means[Math.ceil(0.975 * resamples) - 1]!, n };
}

/** A paired difference in points: "1.0 pts [−0.0, 2.0] (5)", the mean, its interval and the pairs; "–" without pairs. */
export function fmtPaired(d: ReturnType<typeof pairedBootstrap>): string {
  return d.n ? `${(100 * d.mean).toFixed(1)} pts [${(100 * d.lo).toFixed(1)}, ${(100 * d.hi).toFixed(1)}] (${d.n})` : '–';
}
