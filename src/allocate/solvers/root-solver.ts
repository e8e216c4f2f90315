import { solveWeighted, type Allocation, type SolveOptions } from './weighted-solver.ts';

/**
 * TRACE root allocation (TRACE-SPEC §3 step 2): maximise Σ_i V_root(v_i, m_i),
 * V_root(v, m) = 1 − v^m − (1 − v)^m, subject to Σ m_i = M and m_i ∈ {0} ∪ [m_min, m_max].
 * Exact (see weighted-solver.ts); throws InfeasibleBudgetError when M cannot be spent exactly.
 */
export interface RootProblem {
  /** v_i = Ṽ(prompt i), in [0, 1]. */
  v: readonly number[];
  /** M, the root budget (bare rollouts). */
  budget: number;
  /** m_min ≥ 2. */
  min: number;
  /** m_max ≥ m_min. */
  max: number;
}

export function solveRoots(problem: RootProblem, options: { method?: SolveOptions['method'] } = {}): Allocation {
  const items = problem.v.map((v) => ({ v, w: 1 }));
  return solveWeighted(items, { budget: problem.budget, min: problem.min, max: problem.max, method: options.method, fields: { values: 'v' } });
}
