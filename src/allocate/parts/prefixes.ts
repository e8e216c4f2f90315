import { solvePrefixes } from '../solvers/index.ts';
import type { PrefixCandidate, PrefixPlanner } from '../types.ts';

/**
 * The tree strategies' continuation budget: ⌊m_i · N⌋ for a prompt with m_i bare rollouts. N may be a
 * fraction (N = ½: one continuation per two bare rollouts); the part a floor drops stays with the leftover.
 */
function perRoot(N: number): (m: number) => number {
  // The 1e-9 keeps a product such as 10 × 0.3 = 2.9999999999999996 from flooring to 2.
  return (m) => Math.floor(m * N + 1e-9);
}

/** The prefix solver on ρ = r·q + (1 − r)(1 − q), q from `q` (the predictor's, or the truth for oracle). */
export function solvedPrefixPlanner(N: number, q: (c: PrefixCandidate) => number, weight?: (c: PrefixCandidate) => number): PrefixPlanner {
  return {
    continuationBudget: perRoot(N),
    plan({ prefixes, budget }) {
      // weight: trace's entropy-weighted prefixes (w·V_pref; absent = the paper's w = 1).
      const { k } = solvePrefixes(
        prefixes.map((c) => ({ id: c.id, q: q(c), r: c.r, ...(weight ? { w: weight(c) } : {}), ...(c.cost !== undefined ? { cost: c.cost } : {}) })),
        budget,
      );
      return positive(
        prefixes.map((c) => c.id),
        k,
      );
    },
  };
}

/** The ablation's uniform prefixes: the budget spread evenly (`evenPrefixes`), no predictor. */
export function evenPrefixPlanner(N: number): PrefixPlanner {
  return {
    continuationBudget: perRoot(N),
    plan: ({ prefixes, budget }) =>
      positive(
        prefixes.map((c) => c.id),
        evenPrefixes(prefixes, budget),
      ),
  };
}

/**
 * random-tree: each continuation branches from a prefix drawn uniformly at random (with replacement).
 * Priced: a drawn prefix whose continuation no longer fits the budget left is dropped from the draw,
 * until none fits (with every cost 1 this is the unpriced draw, number for number).
 */
export function randomPrefixPlanner(N: number): PrefixPlanner {
  return {
    continuationBudget: perRoot(N),
    plan({ prefixes, budget, rng }) {
      const plan = new Map<string, number>();
      const open = [...prefixes];
      let left = budget;
      while (left > 0 && open.length > 0) {
        const i = rng.int(open.length);
        const c = open[i];
        if (costOf(c) > left) {
          open.splice(i, 1);
          continue;
        }
        left -= costOf(c);
        plan.set(c.id, (plan.get(c.id) ?? 0) + 1);
      }
      return plan;
    },
  };
}

/** A continuation's cost in the budget's unit (1 in trajectories). */
const costOf = (c: PrefixCandidate) => c.cost ?? 1;

/** Round-robin over `order` (candidate indices): one continuation each while it fits, until none fits. */
function roundRobin(prefixes: readonly PrefixCandidate[], order: readonly number[], budget: number): number[] {
  const k = prefixes.map(() => 0);
  let left = budget;
  for (let placed = true; placed && left > 0;) {
    placed = false;
    for (const i of order) {
      const c = costOf(prefixes[i]);
      if (c > left) continue;
      k[i]++;
      left -= c;
      placed = true;
    }
  }
  return k;
}

/**
 * entropy (ARPO-like): continuations one each to the prefixes in order of decreasing policy entropy at
 * the turn after the prefix, cycling when the budget exceeds the prefixes (priced: skipping those that
 * no longer fit). Prefixes without an entropy come last; ties keep input order.
 */
export function entropyPrefixPlanner(N: number): PrefixPlanner {
  return {
    continuationBudget: perRoot(N),
    plan({ prefixes, budget }) {
      const order = prefixes
        .map((c, i) => ({ h: c.entropy ?? -Infinity, i }))
        .sort((a, b) => b.h - a.h || a.i - b.i)
        .map((x) => x.i);
      const k = roundRobin(prefixes, order, budget);
      // The plan lists prefixes by rank (highest entropy first).
      return positive(
        order.map((i) => prefixes[i].id),
        order.map((i) => k[i]),
      );
    },
  };
}

/**
 * The uniform prefix allocation of the ablation (deterministic, no predictor): each of the P prefixes
 * gets ⌊budget / P⌋ continuations, and the budget mod P left over goes one each to the shallowest
 * prefixes first (depth t, then input order — one per rollout at t = 1 before any at t = 2), so no
 * rollout is favoured by its position in the input. Returns K in input order. With costs, one
 * continuation each in that order while it fits, round after round (the same rule, priced).
 */
export function evenPrefixes(prefixes: readonly PrefixCandidate[], budget: number): number[] {
  const P = prefixes.length;
  if (P === 0) return [];
  const order = prefixes
    .map((c, i) => ({ d: c.depth, i }))
    .sort((a, b) => a.d - b.d || a.i - b.i)
    .map((x) => x.i);
  // Priced (turns, tokens): one each in that order while it fits, round after round.
  if (prefixes.some((c) => costOf(c) !== 1)) return roundRobin(prefixes, order, budget);
  const k = prefixes.map(() => Math.floor(budget / P));
  for (let u = 0; u < budget % P; u++) k[order[u]]++;
  return k;
}

/** Drops K = 0 entries: a plan lists expanded prefixes only. */
function positive(ids: readonly string[], k: readonly number[]): Map<string, number> {
  const plan = new Map<string, number>();
  ids.forEach((id, i) => {
    if (k[i] > 0) plan.set(id, k[i]);
  });
  return plan;
}
