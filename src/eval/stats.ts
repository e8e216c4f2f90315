/**
 * Summaries of per-question scores with 95 % intervals.
 *  - A 0/1 metric (EM, accuracy): the Wilson score interval,
 *      (p̂ + z²/2n ± z·√(p̂(1−p̂)/n + z²/4n²)) / (1 + z²/n),  z = 1.96;
 *  - a continuous metric (F1): the normal interval mean ± z·s/√n (s = sample standard deviation).
 *  - The average over datasets is the unweighted mean of the datasets' means (as the Search-R1 and
 *    Tree-GRPO tables average), with the normal interval from Var = Σ_d s_d²/n_d / D².
 */
const Z = 1.96;

export interface MetricSummary {
  mean: number;
  lo: number;
  hi: number;
}

export function isBinary(values: readonly number[]): boolean {
  return values.every((v) => v === 0 || v === 1);
}

/** Mean and 95 % interval of one metric over n questions (n ≥ 1). */
export function summarize(values: readonly number[]): MetricSummary & { variance: number } {
  const n = values.length;
  if (n === 0) return { mean: 0, lo: 0, hi: 0, variance: 0 };
  const mean = values.reduce((a, b) => a + b, 0) / n;
  const variance = n > 1 ? values.reduce((a, v) => a + (v - mean) ** 2, 0) / (n - 1) : 0;
  if (isBinary(values)) {
    const z2 = Z * Z;
    const centre = (mean + z2 / (2 * n)) / (1 + z2 / n);
    const half = (Z * Math.sqrt((mean * (1 - mean)) / n + z2 / (4 * n * n))) / (1 + z2 / n);
    return { mean, lo: Math.max(0, centre - half), hi: Math.min(1, centre + half), variance };
  }
  const half = Z * Math.sqrt(variance / n);
  return { mean, lo: mean - half, hi: mean + half, variance };
}

/** Unweighted mean over datasets, with the normal 95 % interval of that mean. */
export function macroAverage(parts: ReadonlyArray<{ n: number; mean: number; variance: number }>): MetricSummary {
  const d = parts.length;
  if (d === 0) return { mean: 0, lo: 0, hi: 0 };
  const mean = parts.reduce((a, p) => a + p.mean, 0) / d;
  const half = (Z * Math.sqrt(parts.reduce((a, p) => a + p.variance / Math.max(1, p.n), 0))) / d;
  return { mean, lo: mean - half, hi: mean + half };
}
