import { solveWeighted, spendableBelow, type Bounds } from '../solvers/index.ts';
import type { RootCandidate, RootPlanner, RootRoundInput } from '../types.ts';

/** How many bare rollouts a root planner spends of what the ledger has left. */
export type RootShare = (input: RootRoundInput) => number;

/** Root-only strategies: every trajectory left becomes a bare rollout. */
export const allRemaining: RootShare = (input) => Math.floor(input.remaining);

/** M = ⌊B / (1 + N)⌋: the most roots whose m_i · N continuations fit in B too (M + N·M ≤ B). */
export function treeRootCount(B: number, N: number): number {
  return Math.floor(B / (1 + N));
}

/** Tree strategies: M = ⌊remaining / (1 + N)⌋ roots of what the ledger has left. */
export function treeShare(N: number): RootShare {
  return (input) => treeRootCount(input.remaining, N);
}

/**
 * Uniform group sizes over the first `batchSize` candidates (default all), spending `share` bare
 * rollouts: group size g = max(2, ⌊total / n⌋) on as many prompts as fit, the remainder one extra each
 * to the first prompts. With `groupSize` G the group size is fixed instead (TRL's num_generations):
 * G rollouts on each of the first ⌊total / G⌋ candidates (a random draw, as the pool is), the remainder
 * one extra each, round after round. Ignores predictions (the GRPO protocol and the ablation's uniform roots).
 */
export function uniformRootPlanner(share: RootShare, batchSize?: number, groupSize?: number): RootPlanner {
  return { plan: (input) => uniformRoots(input.candidates, share(input), batchSize, groupSize) };
}

export function uniformRoots(candidates: readonly RootCandidate[], total: number, batchSize?: number, groupSize?: number): Map<string, number> {
  const batch = candidates.slice(0, batchSize ?? candidates.length);
  const plan = new Map<string, number>();
  if (batch.length === 0 || total < 2) return plan;
  const g = groupSize ?? Math.max(2, Math.floor(total / batch.length));
  const used = Math.min(batch.length, Math.floor(total / g));
  if (used === 0) return plan;
  const counts = new Array<number>(used).fill(g);
  // Without groupSize the remainder is below `used`: one round. With it, a pool too small for ⌊total / G⌋
  // groups gets the rest round-robin rather than leaving budget unspent.
  for (let extra = total - used * g, i = 0; extra > 0; extra--, i = (i + 1) % used) counts[i]!++;
  counts.forEach((m, i) => plan.set(batch[i]!.promptId, m));
  return plan;
}

/** A candidate's value item for the exact solver: success probability v and weight w. */
export type RootValue = (c: RootCandidate) => { v: number; w: number };

/**
 * The exact root solver (TRACE-SPEC §3 step 2): maximise Σ w_i V_root(v_i, m_i) over m_i ∈ {0} ∪
 * [m_min, m_max] spending the largest budget ≤ share that the bounds can spend. Prompts with m_i = 0
 * are left out of the plan.
 */
export function solvedRootPlanner(share: RootShare, value: RootValue, bounds: Bounds): RootPlanner {
  return {
    plan(input) {
      const cs = input.candidates;
      const budget = spendableBelow(cs.length, share(input), bounds);
      const { m } = solveWeighted(cs.map(value), { budget, min: bounds.min, max: bounds.max });
      const plan = new Map<string, number>();
      m.forEach((mi, i) => {
        if (mi > 0) plan.set(cs[i].promptId, mi);
      });
      return plan;
    },
  };
}
