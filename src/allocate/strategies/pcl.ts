import type { OptionsOf } from '../options.ts';
import { allRemaining, solvedRootPlanner } from '../parts/roots.ts';
import type { Strategy } from '../types.ts';

/**
 * PCL-like, prompt level only: the exact root solver on the predictor's v with all B spent on roots
 * (m_i ∈ {0} ∪ [m_min, m_max]); no prefix expansion.
 */
export function pclStrategy(o: OptionsOf<'pcl'>): Strategy {
  return { name: 'pcl', cap: o.budget, roots: solvedRootPlanner(allRemaining, (c) => ({ v: c.v, w: 1 }), o) };
}
