import type { OptionsOf } from '../options.ts';
import type { Strategy } from '../types.ts';
import { solverTreeStrategy } from './trace.ts';
import { truePrefix, trueRoot } from './truth.ts';

/**
 * Oracle: TRACE's solvers fed the true success probabilities p (roots and prefixes) instead of the
 * predictor's — the upper bound for any predictor. Needs an environment that knows the truth.
 */
export function oracleStrategy(o: OptionsOf<'oracle'>): Strategy {
  return solverTreeStrategy('oracle', o, { root: (c) => trueRoot(c, 'oracle'), prefix: (c) => truePrefix(c, 'oracle') });
}
