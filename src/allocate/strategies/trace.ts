import { solvePrefixes } from '../prefix-solver.ts';
import type { StrategyOptions } from '../options.ts';
import type { PrefixCandidate, RootCandidate, Strategy } from '../types.ts';
import { expansionValue, poolLeftover, posteriorRoot } from '../trace-options.ts';
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

/**
 * trace with the paper's defaults is exactly `solverTreeStrategy` on Ṽ. Its options beyond the paper
 * (docs/allocation.md §4) change one piece each: where v comes from (rootPrior), what a root is worth
 * (rootValue), how prefixes are weighted (prefixes: entropy-weighted), where leftover budget goes
 * (leftover); each is an ablation arm of bench/compare.
 */
export function traceStrategy(o: StrategyOptions): Strategy {
  const kappa = o.priorStrength ?? 4;
  const root = o.rootPrior === 'posterior' ? (c: RootCandidate) => posteriorRoot(c, kappa) : (c: RootCandidate) => c.v;
  const base = solverTreeStrategy('trace', o, { root, prefix: (c) => c.q });
  const strategy: Strategy = { ...base };
  if (o.rootValue === 'expansion-aware' && o.roots !== 'uniform') {
    strategy.planRoots = (input) => {
      if (!firstRoundOnly(input)) return new Map();
      const M = treeRootBudget(o.budget, o.continuations, input.remaining);
      const items = input.candidates.map((c) => {
        const v = root(c);
        return { v, w: 1, perUnit: expansionValue(v, c.expandable ?? 1, o.continuations) };
      });
      return solvedRoots(input.candidates, items, M, o);
    };
  }
  if (o.prefixes === 'entropy-weighted') {
    const beta = o.entropyWeight ?? 1;
    strategy.planPrefixes = ({ prefixes, budget }) => {
      if (prefixes.length === 0 || budget <= 0) return new Map();
      const { k } = solvePrefixes(prefixes.map((c) => ({ id: c.id, q: c.q, r: c.r, w: 1 + beta * (c.entropy ?? 0) })), budget);
      return positive(prefixes.map((c) => c.id), k);
    };
  }
  if (o.leftover === 'pool') {
    strategy.planLeftover = (input) => {
      const cs = input.candidates;
      const delta = poolLeftover(cs.map(root), cs.map((c) => input.roots.get(c.promptId) ?? 0), input.remaining, o.min, o.max);
      return new Map(cs.flatMap((c, i) => (delta[i] > 0 ? [[c.promptId, delta[i]] as [string, number]] : [])));
    };
  }
  return strategy;
}
