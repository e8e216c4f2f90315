import { knapsackWeight } from './mixed-value.ts';
import { solveWeighted, type Allocation, type SolveOptions } from './weighted-solver.ts';

/**
 * Knapsack-RL allocation: maximise Σ_i (1 − p_i^k_i − (1 − p_i)^k_i) · p_i(1 − p_i)² subject to
 * Σ k_i = M and k_i ∈ {0} ∪ [min, max]. The weight p(1 − p)² is constant per prompt, so this is the
 * root problem with weights, solved exactly by the same solver (weighted-solver.ts).
 */
export interface KnapsackProblem {
  /** Per-prompt success rates p_i in [0, 1]. */
  p: readonly number[];
  budget: number;
  min: number;
  max: number;
}

export function solveKnapsack(problem: KnapsackProblem, options: { method?: SolveOptions['method'] } = {}): Allocation {
  const items = problem.p.map((p) => ({ v: p, w: knapsackWeight(p) }));
  return solveWeighted(items, { budget: problem.budget, min: problem.min, max: problem.max, method: options.method, fields: { values: 'p' } });
}
