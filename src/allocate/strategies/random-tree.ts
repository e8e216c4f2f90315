import { uniformLeftover } from '../parts/leftover.ts';
import type { OptionsOf } from '../options.ts';
import { randomPrefixPlanner } from '../parts/prefixes.ts';
import { treeShare, uniformRootPlanner } from '../parts/roots.ts';
import type { PrefixPlanner, Strategy } from '../types.ts';

/**
 * A tree strategy without a predictor: uniform roots (M = ⌊B / (1 + N)⌋ over the batch), the given
 * prefix planner for each prompt's m · N continuations, and a uniform leftover top-up.
 */
export function uniformTreeStrategy(name: 'random-tree' | 'entropy', o: OptionsOf<'random-tree' | 'entropy'>, prefixes: PrefixPlanner): Strategy {
  return { name, cap: o.budget, roots: uniformRootPlanner(treeShare(o.continuations), o.batchSize), prefixes, leftover: uniformLeftover(o.max) };
}

/**
 * TreePO / Tree-GRPO-like: uniform roots and each of a prompt's m · N continuations branches from an
 * intermediate prefix drawn uniformly at random (with replacement) — the same budget as trace,
 * without a predictor.
 */
export function randomTreeStrategy(o: OptionsOf<'random-tree'>): Strategy {
  return uniformTreeStrategy('random-tree', o, randomPrefixPlanner(o.continuations));
}
