import type { StrategyOptions } from '../options.ts';
import type { Strategy } from '../types.ts';
import { firstRoundOnly, flatRootBudget, uniformRoots } from './common.ts';

/**
 * GRPO baseline: uniform group size over the batch (the first `batchSize` prompts of the pool), no
 * prefix expansion; the continuation share is spent on more bare rollouts, so it spends all B.
 */
export function grpoStrategy(o: StrategyOptions): Strategy {
  return {
    name: 'grpo',
    trajectoryCap: o.budget,
    planRoots(input) {
      if (!firstRoundOnly(input)) return new Map();
      return uniformRoots(input.candidates, flatRootBudget(o.budget, input.remaining), o.batchSize);
    },
    prefixBudget: () => 0,
    planPrefixes: () => new Map(),
  };
}
