import type { StrategyOptions } from '../options.ts';
import type { Strategy } from '../types.ts';
import { firstRoundOnly, flatRootBudget, solvedRoots } from './common.ts';

/**
 * PCL-like, prompt level only: the exact root solver on the predictor's v with all B spent on roots
 * (m_i ∈ {0} ∪ [m_min, m_max]); no prefix expansion.
 */
export function pclStrategy(o: StrategyOptions): Strategy {
  return {
    name: 'pcl',
    trajectoryCap: o.budget,
    planRoots(input) {
      if (!firstRoundOnly(input)) return new Map();
      const items = input.candidates.map((c) => ({ v: c.v, w: 1 }));
      return solvedRoots(input.candidates, items, flatRootBudget(o.budget, input.remaining), o);
    },
    prefixBudget: () => 0,
    planPrefixes: () => new Map(),
  };
}
