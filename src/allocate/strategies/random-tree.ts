import { uniformLeftover } from '../leftover.ts';
import type { OptionsOf } from '../options.ts';
import { randomPrefixPlanner } from '../parts/prefixes.ts';
import { treeShare, uniformRootPlanner } from '../parts/roots.ts';
import type { Strategy } from '../types.ts';

/**
 * TreePO / Tree-GRPO-like: uniform roots (M = ⌊B / (1 + N)⌋ over the batch) and each of a prompt's
 * m · N continuations branches from an intermediate prefix drawn uniformly at random (with
 * replacement) — the same budget as trace, without a predictor.
 */
export function randomTreeStrategy(o: OptionsOf<'random-tree'>): Strategy {
  return {
    name: 'random-tree',
    trajectoryCap: o.budget,
    roots: uniformRootPlanner(treeShare(o.continuations), o.batchSize),
    prefixes: randomPrefixPlanner(o.continuations),
    leftover: uniformLeftover(o.max),
  };
}
