import { readingEvidence } from '../parts/evidence.ts';
import { adaptiveLeftover, poolLeftoverPlanner, uniformLeftover } from '../parts/leftover.ts';
import { expansionValue, posteriorRoot } from '../trace-options.ts';
import type { OptionsOf } from '../options.ts';
import { evenPrefixPlanner, solvedPrefixPlanner } from '../parts/prefixes.ts';
import { solvedRootPlanner, treeShare, uniformRootPlanner } from '../parts/roots.ts';
import type { ExpansionSchedule, PrefixCandidate, RootBudget, RootCandidate, Strategy } from '../types.ts';

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
export function solverTreeStrategy(name: 'trace' | 'oracle', o: Omit<OptionsOf<'oracle'>, 'name'>, probs: Probabilities): Strategy {
  const uniformRoots = o.roots === 'uniform';
  return {
    name,
    cap: o.budget,
    roots: uniformRoots
      ? uniformRootPlanner(treeShare(o.continuations), o.batchSize)
      : solvedRootPlanner(treeShare(o.continuations), (c) => ({ v: probs.root(c), w: 1 }), o),
    prefixes: o.prefixes === 'uniform' ? evenPrefixPlanner(o.continuations) : solvedPrefixPlanner(o.continuations, probs.prefix),
    leftover: uniformRoots ? uniformLeftover(o.max) : adaptiveLeftover(probs.root, o.max),
  };
}

/** The roots' budget of the solver tree strategies: the exact root solver, or the ablation's uniform groups. */
export function solverTreeRootBudget(o: Pick<OptionsOf<'oracle'>, 'roots' | 'continuations' | 'min' | 'max'>): RootBudget {
  return o.roots === 'uniform'
    ? { kind: 'uniform', continuations: o.continuations }
    : { kind: 'solver', continuations: o.continuations, min: o.min, max: o.max };
}

/**
 * trace with no extra options is exactly `solverTreeStrategy` on Ṽ (the paper, the faithful arm). Its
 * options beyond the paper (docs/allocation.md §4) each swap one part: where v comes from (rootPrior),
 * what a root is worth (rootValue), how prefixes are weighted (prefixes: entropy-weighted, decision-weighted), how deep
 * the expansion goes (expansionRounds), whether the root competes with the prefixes (rootResample), where leftover budget goes (leftover),
 * whether prompts share one continuation budget (prefixBudget), how shallow a branch point may be (branchFrom), whether the observed outcome steers branching (prefixValue). Each swaps one part only, so a comparison against the paper's method measures what that part alone is worth.
 */
export function traceStrategy(o: OptionsOf<'trace'>): Strategy {
  const kappa = o.priorStrength ?? 4;
  const root = o.rootPrior === 'posterior' ? (c: RootCandidate) => posteriorRoot(c, kappa) : (c: RootCandidate) => c.v;
  const weighted = o.prefixes === 'entropy-weighted' || o.prefixes === 'decision-weighted';
  const paper = solverTreeStrategy(
    'trace',
    { ...o, prefixes: weighted ? undefined : (o.prefixes as 'adaptive' | 'uniform' | undefined) },
    { root, prefix: (c) => c.q },
  );
  const uniformRoots = o.roots === 'uniform';
  const beta = o.entropyWeight ?? 1;
  const prefixes =
    o.prefixes === 'entropy-weighted'
      ? solvedPrefixPlanner(
          o.continuations,
          (c) => c.q,
          (c) => 1 + beta * (c.entropy ?? 0),
        )
      : o.prefixes === 'decision-weighted'
        ? solvedPrefixPlanner(
            o.continuations,
            (c) => c.q,
            (c) => c.after ?? 1,
          )
        : paper.prefixes!;
  const from = o.branchFrom ?? 1;
  const blind = o.prefixValue === 'outcome-blind';
  // branchFrom: prefixes shallower than t_min are not branch points; the root (depth 0, rootResample) stays.
  // With none left the plan is empty and the prompt's continuation budget goes to the leftover.
  // outcome-blind: the solver sees each candidate's prediction in place of the outcome it observed.
  const plan: typeof prefixes.plan =
    from > 1 || blind
      ? (input) => {
          const deep = from > 1 ? input.prefixes.filter((c) => c.depth === 0 || c.depth >= from) : input.prefixes;
          const seen = blind ? deep.map((c) => ({ ...c, r: c.q })) : deep;
          return seen.length > 0 ? prefixes.plan({ ...input, prefixes: seen }) : new Map();
        }
      : prefixes.plan;
  const readsHistory = o.rootPrior === 'posterior';
  const readsExpandable = o.rootValue === 'expansion-aware' && !uniformRoots;
  const strategy: Strategy = {
    ...paper,
    roots:
      o.rootValue === 'expansion-aware' && !uniformRoots
        ? solvedRootPlanner(treeShare(o.continuations), (c) => ({ v: root(c), w: 1, perUnit: expansionValue(root(c), c.expandable ?? 1, o.continuations) }), o)
        : paper.roots,
    prefixes: { ...prefixes, plan, schedule: schedule(o) },
    leftover: o.leftover === 'pool' && !uniformRoots ? poolLeftoverPlanner(root, o.min, o.max) : paper.leftover,
  };
  return readsHistory || readsExpandable ? readingEvidence(strategy, { expandable: readsExpandable }) : strategy;
}

function schedule(o: Pick<OptionsOf<'trace'>, 'rootResample' | 'prefixBudget' | 'expansionRounds'>): ExpansionSchedule {
  const offersRoot = o.rootResample === true;
  return o.prefixBudget === 'shared' ? { kind: 'step', offersRoot } : { kind: 'per-prompt', rounds: o.expansionRounds ?? 1, offersRoot };
}
