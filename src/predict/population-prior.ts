/**
 * The population prior of the per-prompt posterior (posterior.ts, `population: true`): the distribution
 * g of success rates across prompts, fitted to every prompt's own outcomes, so one prompt's few outcomes
 * are read against what prompts are like. A prompt that went 3 for 3 is then likely one of the many
 * solved prompts when the population has many, not only "somewhat easy" as a Beta prior around the
 * shared prediction would say; and the root solver can leave it out, as it leaves out a p = 1 prompt.
 *
 * g lives on a fixed grid of success rates, evenly spaced in log-odds (GRID), and is the nonparametric
 * maximum-likelihood estimate over the grid (Kiefer–Wolfowitz), found by EM: with prompt i's successes
 * Sᵢ of Nᵢ outcomes (real numbers, as discounting makes them),
 *   wᵢⱼ ∝ gⱼ · pⱼ^Sᵢ (1 − pⱼ)^(Nᵢ − Sᵢ),     gⱼ ← meanᵢ wᵢⱼ.
 * Each call warm-starts from the last estimate, so a few iterations a step track a moving population.
 */

/** Success rates of the grid: σ(z) for z from −6 to 6 in steps of 0.3 (41 points, 0.0025 … 0.9975). */
export const GRID: readonly number[] = Array.from({ length: 41 }, (_, j) => 1 / (1 + Math.exp(-(-6 + 0.3 * j))));
const LOG_P = GRID.map(Math.log);
const LOG_Q = GRID.map((p) => Math.log(1 - p));
const FLOOR = 1e-3;

/** The uniform distribution over the grid: EM's start. */
export function uniformPopulation(): Float64Array {
  return new Float64Array(GRID.length).fill(1 / GRID.length);
}

/** Normalised weights ∝ g(p) · p^a (1 − p)^b over the grid, into `out`. */
function posteriorWeights(g: Float64Array, a: number, b: number, out: Float64Array): void {
  let max = -Infinity;
  for (let j = 0; j < GRID.length; j++) {
    out[j] = g[j]! > 0 ? Math.log(g[j]!) + a * LOG_P[j]! + b * LOG_Q[j]! : -Infinity;
    if (out[j]! > max) max = out[j]!;
  }
  let total = 0;
  for (let j = 0; j < GRID.length; j++) total += out[j] = Math.exp(out[j]! - max);
  for (let j = 0; j < GRID.length; j++) out[j]! /= total;
}

/** E[p] under g(p) · p^a (1 − p)^b: the posterior mean after a successes and b failures (real counts ≥ 0). */
export function populationMean(g: Float64Array, a: number, b: number): number {
  const w = new Float64Array(GRID.length);
  posteriorWeights(g, a, b, w);
  let m = 0;
  for (let j = 0; j < GRID.length; j++) m += w[j]! * GRID[j]!;
  return m;
}

/** `iterations` EM steps from `start` on the prompts' (successes, outcomes); the evidence-free prompts add nothing. */
export function fitPopulation(evidence: Iterable<{ s: number; n: number }>, start: Float64Array, iterations = 20): Float64Array {
  const seen = [...evidence].filter((e) => e.n > 0);
  if (seen.length === 0) return start.slice();
  let g = start.slice();
  const w = new Float64Array(GRID.length);
  for (let it = 0; it < iterations; it++) {
    const next = new Float64Array(GRID.length);
    for (const e of seen) {
      posteriorWeights(g, e.s, e.n - e.s, w);
      for (let j = 0; j < GRID.length; j++) next[j]! += w[j]! / seen.length;
    }
    // A floor of FLOOR·uniform keeps every grid point reachable: EM never revives a weight that reached 0,
    // and the population moves as the policy learns.
    for (let j = 0; j < GRID.length; j++) next[j] = (1 - FLOOR) * next[j]! + FLOOR / GRID.length;
    g = next;
  }
  return g;
}
