import type { OptionsOf } from '../options.ts';
import { entropyPrefixPlanner } from '../parts/prefixes.ts';
import type { Strategy } from '../types.ts';
import { uniformTreeStrategy } from './random-tree.ts';

/** Entropy branching (ARPO-like): uniform roots as random-tree; continuations at the highest-entropy prefixes. */
export function entropyStrategy(o: OptionsOf<'entropy'>): Strategy {
  return uniformTreeStrategy('entropy', o, entropyPrefixPlanner(o.continuations));
}
