import type { StrategyOptions } from '../options.ts';
import type { Strategy } from '../types.ts';
import { firstRoundOnly, leftoverRoots, treeRootBudget, uniformRoots } from './common.ts';

/**
 * TreePO / Tree-GRPO-like: uniform roots (M = ⌊B / (1 + N)⌋ over the batch) and each of a prompt's
 * m · N continuations branches from an intermediate prefix drawn uniformly at random (with
 * replacement) — the same budget as trace, without a predictor.
 */
export function randomTreeStrategy(o: StrategyOptions): Strategy {
  return {
    name: 'random-tree',
    trajectoryCap: o.budget,
    planRoots(input) {
      if (!firstRoundOnly(input)) return new Map();
      return uniformRoots(input.candidates, treeRootBudget(o.budget, o.continuations, input.remaining), o.batchSize);
    },
    prefixBudget: (m) => m * o.continuations,
    planPrefixes({ prefixes, budget, rng }) {
      const plan = new Map<string, number>();
      if (prefixes.length === 0) return plan;
      for (let u = 0; u < budget; u++) {
        const id = prefixes[rng.int(prefixes.length)].id;
        plan.set(id, (plan.get(id) ?? 0) + 1);
      }
      return plan;
    },
    planLeftover: (input) => leftoverRoots(input, o.max),
  };
}
