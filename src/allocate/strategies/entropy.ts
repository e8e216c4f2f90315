import type { StrategyOptions } from '../options.ts';
import type { Strategy } from '../types.ts';
import { firstRoundOnly, leftoverRoots, treeRootBudget, uniformRoots } from './common.ts';

/**
 * Entropy branching (ARPO-like): uniform roots as random-tree; a prompt's m · N continuations go one
 * each to its prefixes in order of decreasing policy entropy at the turn after the prefix (after the
 * tool's observation), cycling when the budget exceeds the prefixes. Prefixes without an entropy come
 * last; ties keep input order.
 */
export function entropyStrategy(o: StrategyOptions): Strategy {
  return {
    name: 'entropy',
    trajectoryCap: o.budget,
    planRoots(input) {
      if (!firstRoundOnly(input)) return new Map();
      return uniformRoots(input.candidates, treeRootBudget(o.budget, o.continuations, input.remaining), o.batchSize);
    },
    prefixBudget: (m) => m * o.continuations,
    planPrefixes({ prefixes, budget }) {
      const plan = new Map<string, number>();
      if (prefixes.length === 0) return plan;
      const ranked = prefixes
        .map((c, i) => ({ id: c.id, h: c.entropy ?? -Infinity, i }))
        .sort((a, b) => b.h - a.h || a.i - b.i);
      for (let u = 0; u < budget; u++) {
        const id = ranked[u % ranked.length].id;
        plan.set(id, (plan.get(id) ?? 0) + 1);
      }
      return plan;
    },
    planLeftover: (input) => leftoverRoots(input, o.max),
  };
}
