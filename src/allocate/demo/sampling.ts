import type { Rng } from '../../util/rng.ts';

/** Samplers for simulations (the allocation demo); all randomness comes from the Rng passed in. */

/** Standard normal by Box–Muller. */
export function normal(rng: Rng): number {
  const u = 1 - rng.next(); // (0, 1]
  const v = rng.next();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

/** Gamma(shape, 1) by Marsaglia–Tsang; shape < 1 through Gamma(shape + 1) · U^(1/shape). */
export function gamma(shape: number, rng: Rng): number {
  if (shape < 1) return gamma(shape + 1, rng) * (1 - rng.next()) ** (1 / shape);
  const d = shape - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  for (;;) {
    let x: number;
    let v: number;
    do {
      x = normal(rng);
      v = 1 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const u = 1 - rng.next();
    if (Math.log(u) < 0.5 * x * x + d - d * v + d * Math.log(v)) return d * v;
  }
}

/** Beta(a, b) as X / (X + Y) with X ~ Gamma(a), Y ~ Gamma(b). */
export function beta(a: number, b: number, rng: Rng): number {
  const x = gamma(a, rng);
  const y = gamma(b, rng);
  return x + y > 0 ? x / (x + y) : 0.5;
}

/** Number of successes in m Bernoulli(p) trials. */
export function binomial(m: number, p: number, rng: Rng): number {
  let s = 0;
  for (let k = 0; k < m; k++) if (rng.next() < p) s++;
  return s;
}

/** A noisy predictor of p: σ(logit(p) + noise · ε), ε ~ N(0, 1); p ∈ {0, 1} are clipped to 1e-4. */
export function noisyPrediction(p: number, noise: number, rng: Rng): number {
  const q = Math.min(1 - 1e-4, Math.max(1e-4, p));
  const z = Math.log(q / (1 - q)) + noise * normal(rng);
  return 1 / (1 + Math.exp(-z));
}
