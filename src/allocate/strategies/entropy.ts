import { uniformLeftover } from '../leftover.ts';
import type { OptionsOf } from '../options.ts';
import { entropyPrefixPlanner } from '../parts/prefixes.ts';
import { treeShare, uniformRootPlanner } from '../parts/roots.ts';
import type { Strategy } from '../types.ts';

/** Entropy branching (ARPO-like): uniform roots as random-tree; continuations at the highest-entropy prefixes. */
export function entropyStrategy(o: OptionsOf<'entropy'>): Strategy {
  return {
    name: 'entropy',
    trajectoryCap: o.budget,
    roots: uniformRootPlanner(treeShare(o.continuations), o.batchSize),
    prefixes: entropyPrefixPlanner(o.continuations),
    leftover: uniformLeftover(o.max),
  };
}
