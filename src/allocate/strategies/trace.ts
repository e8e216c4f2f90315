import { adaptiveLeftover, uniformLeftover } from '../leftover.ts';
import type { OptionsOf } from '../options.ts';
import { evenPrefixPlanner, solvedPrefixPlanner } from '../parts/prefixes.ts';
import { solvedRootPlanner, treeShare, uniformRootPlanner } from '../parts/roots.ts';
import type { PrefixCandidate, RootCandidate, Strategy } from '../types.ts';

/** Where a solver tree strategy reads its probabilities: the predictor's (trace) or the truth (oracle). */
export interface Probabilities {
  root(c: RootCandidate): number;
  prefix(c: PrefixCandidate): number;
}

/**
 * TRACE (TRACE-SPEC §3): M = ⌊B / (1 + N)⌋ roots by the exact root solver on v, then per prompt
 * m_i · N continuations by the prefix solver on q and the observed reward r, and the leftover top-up by
 * marginal V_root gain. The ablation arms swap a part for its uniform counterpart at the same budget:
 * `roots: 'uniform'` = uniform groups over the batch (as random-tree; leftover also uniform),
 * `prefixes: 'uniform'` = the continuations spread evenly over the prompt's prefixes.
 */
export function solverTreeStrategy(name: 'trace' | 'oracle', o: OptionsOf<'trace' | 'oracle'>, probs: Probabilities): Strategy {
  const uniformRoots = o.roots === 'uniform';
  return {
    name,
    trajectoryCap: o.budget,
    roots: uniformRoots ? uniformRootPlanner(treeShare(o.continuations), o.batchSize) : solvedRootPlanner(treeShare(o.continuations), (c) => ({ v: probs.root(c), w: 1 }), o),
    prefixes: o.prefixes === 'uniform' ? evenPrefixPlanner(o.continuations) : solvedPrefixPlanner(o.continuations, probs.prefix),
    leftover: uniformRoots ? uniformLeftover(o.max) : adaptiveLeftover(probs.root, o.max),
  };
}

export function traceStrategy(o: OptionsOf<'trace'>): Strategy {
  return solverTreeStrategy('trace', o, { root: (c) => c.v, prefix: (c) => c.q });
}
