/**
 * The per-prompt value functions of root allocation, with the paper's names (TRACE-SPEC §3 step 2).
 * Small, pure functions so the solvers and the brute-force tests share one definition.
 */

/**
 * V_root(v, m) = 1 − v^m − (1 − v)^m: the chance that m independent outcomes with success
 * probability v hold both a success and a failure. V_root(v, 0) = V_root(v, 1) = 0 by definition
 * (the formula would give −1 at m = 0). Computed with u = min(v, 1 − v) so v and 1 − v agree exactly.
 */
export function mixedChance(v: number, m: number): number {
  if (m <= 1) return 0;
  const u = v <= 0.5 ? v : 1 - v;
  return Math.max(0, 1 - u ** m - (1 - u) ** m);
}

/**
 * Marginal gain of the m-th outcome, V_root(v, m) − V_root(v, m − 1) = v^(m−1)(1 − v) + (1 − v)^(m−1) v
 * for m ≥ 2 (0 for m ≤ 1). It decreases in m for m ≥ 2, so V_root is concave on m ≥ 1, but the first
 * outcome is worth nothing: over {0, 1, 2, …} V_root is not concave and plain greedy is not exact.
 */
export function mixedGain(v: number, m: number): number {
  if (m <= 1) return 0;
  const u = v <= 0.5 ? v : 1 - v;
  return u ** (m - 1) * (1 - u) + (1 - u) ** (m - 1) * u;
}

/** Knapsack-RL's per-prompt weight p(1 − p)²: its value is (1 − p^k − (1 − p)^k) · p(1 − p)². */
export function knapsackWeight(p: number): number {
  return p * (1 - p) * (1 - p);
}
