import type { OptionsOf } from '../options.ts';
import { allRemaining, uniformRootPlanner } from '../parts/roots.ts';
import type { Strategy } from '../types.ts';

/**
 * GRPO baseline: uniform group size over the batch (the first `batchSize` prompts of the pool), no
 * prefix expansion; the continuation share is spent on more bare rollouts, so it spends all B. With
 * `groupSize` G: G rollouts on each of ⌊B / G⌋ prompts of the pool, however large the pool.
 */
export function grpoStrategy(o: OptionsOf<'grpo'>): Strategy {
  return { name: 'grpo', cap: o.budget, roots: uniformRootPlanner(allRemaining, o.batchSize, o.groupSize) };
}
