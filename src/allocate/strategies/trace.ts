import { solvePrefixes } from '../prefix-solver.ts';
import type { StrategyOptions } from '../options.ts';
import type { PrefixCandidate, RootCandidate, Strategy } from '../types.ts';
import { evenPrefixes, firstRoundOnly, leftoverRoots, positive, solvedRoots, treeRootBudget, uniformRoots } from './common.ts';

/** Where a tree strategy reads its probabilities: the predictor's (trace) or the truth (oracle). */
export interface Probabilities {
  root(c: RootCandidate): number;
  prefix(c: PrefixCandidate): number;
}

/**
 * TRACE (TRACE-SPEC §3): M = ⌊B / (1 + N)⌋ roots by the exact root solver on v = Ṽ(prompt), then per
 * prompt m_i · N continuations by the prefix solver on q = Ṽ(prefix) and the observed reward r.
 * The ablation options replace either phase by its uniform counterpart at the same budget:
 * `roots: 'uniform'` = uniform groups over the batch (as random-tree; leftover budget also uniform),
 * `prefixes: 'uniform'` = the continuations spread evenly over the prompt's prefixes (`evenPrefixes`).
 */
export function solverTreeStrategy(name: string, o: StrategyOptions, probs: Probabilities): Strategy {
  const uniformRootsChosen = o.roots === 'uniform';
  const uniformPrefixesChosen = o.prefixes === 'uniform';
  return {
    name,
    trajectoryCap: o.budget,
    planRoots(input) {
      if (!firstRoundOnly(input)) return new Map();
      const M = treeRootBudget(o.budget, o.continuations, input.remaining);
      if (uniformRootsChosen) return uniformRoots(input.candidates, M, o.batchSize);
      const items = input.candidates.map((c) => ({ v: probs.root(c), w: 1 }));
      return solvedRoots(input.candidates, items, M, o);
    },
    prefixBudget: (m) => m * o.continuations,
    planPrefixes({ prefixes, budget }) {
      if (prefixes.length === 0 || budget <= 0) return new Map();
      if (uniformPrefixesChosen) return positive(prefixes.map((c) => c.id), evenPrefixes(prefixes, budget));
      const { k } = solvePrefixes(prefixes.map((c) => ({ id: c.id, q: probs.prefix(c), r: c.r })), budget);
      return positive(prefixes.map((c) => c.id), k);
    },
    planLeftover: (input) => (uniformRootsChosen ? leftoverRoots(input, o.max) : leftoverRoots(input, o.max, probs.root)),
  };
}

export function traceStrategy(o: StrategyOptions): Strategy {
  return solverTreeStrategy('trace', o, { root: (c) => c.v, prefix: (c) => c.q });
}
