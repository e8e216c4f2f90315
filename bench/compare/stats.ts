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
