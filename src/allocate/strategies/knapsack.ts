import { knapsackWeight } from '../solvers/index.ts';
import type { OptionsOf } from '../options.ts';
import { readingEvidence } from '../parts/evidence.ts';
import { allRemaining, solvedRootPlanner } from '../parts/roots.ts';
import type { RootCandidate, Strategy } from '../types.ts';

/** Smoothed per-prompt success rate from history: p̂ = (successes + α) / (trials + 2α). */
export function historyRate(c: RootCandidate, alpha: number): number {
  const s = c.history?.successes ?? 0;
  const t = c.history?.trials ?? 0;
  if (t + 2 * alpha === 0) return 0.5;
  return (s + alpha) / (t + 2 * alpha);
}

/**
 * Knapsack-RL-like, prompt level only: maximise Σ (1 − p̂^k − (1 − p̂)^k) · p̂(1 − p̂)² over k_i ∈ {0} ∪
 * [min, max] with Σ k = B, p̂ from each prompt's history (not the predictor); exact solver.
 */
export function knapsackStrategy(o: OptionsOf<'knapsack'>): Strategy {
  const value = (c: RootCandidate) => {
    const p = historyRate(c, o.knapsackPrior);
    return { v: p, w: knapsackWeight(p) };
  };
  return readingEvidence({ name: 'knapsack', cap: o.budget, roots: solvedRootPlanner(allRemaining, value, o) });
}
