import { spendableBelow, type Bounds } from '../feasibility.ts';
import { solveWeighted } from '../weighted-solver.ts';
import type { PrefixCandidate, RootCandidate, RootRoundInput } from '../types.ts';
import { MissingInputError } from '../errors.ts';
import { adaptiveTopUp, uniformTopUp } from '../leftover.ts';
import type { LeftoverInput } from '../types.ts';

/** Leftover budget as extra bare rollouts: by marginal V_root gain on `prob`, or uniformly when absent. */
export function leftoverRoots(input: LeftoverInput, mMax: number, prob?: (c: RootCandidate) => number): Map<string, number> {
  const cs = input.candidates;
  const m = cs.map((c) => input.roots.get(c.promptId) ?? 0);
  const delta = prob ? adaptiveTopUp(cs.map(prob), m, input.remaining, mMax) : uniformTopUp(m, input.remaining, mMax);
  return new Map(cs.flatMap((c, i) => (delta[i] > 0 ? [[c.promptId, delta[i]] as [string, number]] : [])));
}

/** Root budget of a tree strategy: M = ⌊min(B, remaining) / (1 + N)⌋, so M + N·M ≤ B. */
export function treeRootBudget(B: number, N: number, remaining: number): number {
  return Math.floor(Math.min(B, remaining) / (1 + N));
}

/** Root budget of a root-only strategy: all of B (or what the ledger has left). */
export function flatRootBudget(B: number, remaining: number): number {
  return Math.floor(Math.min(B, remaining));
}

/**
 * Uniform group sizes over the first `batchSize` candidates spending `total` bare rollouts: group size
 * g = max(2, ⌊total / n⌋) on as many prompts as fit, the remainder one extra each to the first prompts.
 */
export function uniformRoots(candidates: readonly RootCandidate[], total: number, batchSize?: number): Map<string, number> {
  const batch = candidates.slice(0, batchSize ?? candidates.length);
  const plan = new Map<string, number>();
  if (batch.length === 0 || total < 2) return plan;
  const g = Math.max(2, Math.floor(total / batch.length));
  const used = Math.min(batch.length, Math.floor(total / g));
  let extra = total - used * g;
  for (let i = 0; i < used; i++) {
    const add = extra > 0 ? 1 : 0;
    extra -= add;
    plan.set(batch[i].promptId, g + add);
  }
  return plan;
}

/**
 * Exact root allocation of the largest budget ≤ M that the bounds can spend, with value weights w_i:
 * maximise Σ w_i V_root(v_i, m_i). Prompts with m_i = 0 are left out of the plan.
 */
export function solvedRoots(candidates: readonly RootCandidate[], items: ReadonlyArray<{ v: number; w: number }>, M: number, bounds: Bounds): Map<string, number> {
  const budget = spendableBelow(candidates.length, M, bounds);
  const { m } = solveWeighted(items, { budget, min: bounds.min, max: bounds.max });
  const plan = new Map<string, number>();
  m.forEach((mi, i) => {
    if (mi > 0) plan.set(candidates[i].promptId, mi);
  });
  return plan;
}

/** Only round 0 plans roots for one-round strategies. */
export function firstRoundOnly(input: RootRoundInput): boolean {
  return input.round === 0;
}

export function trueRoot(c: RootCandidate, strategy: string): number {
  if (c.p === undefined) throw new MissingInputError(`strategy "${strategy}" needs the true success probability p of prompt "${c.promptId}" (a simulated environment supplies it)`);
  return roundedIntoUnit(c.p);
}

export function truePrefix(c: PrefixCandidate, strategy: string): number {
  if (c.p === undefined) throw new MissingInputError(`strategy "${strategy}" needs the true success probability p of prefix "${c.id}" (a simulated environment supplies it)`);
  return roundedIntoUnit(c.p);
}

/**
 * A true probability computed as a sum of products (the simulator's Σ branch p · value) can land a few
 * ulps outside [0, 1], e.g. 1.0000000000000002; only such rounding is clamped — anything further out is
 * left for the solvers to reject as bad input.
 */
export function roundedIntoUnit(p: number): number {
  if (p > 1 && p <= 1 + 1e-9) return 1;
  if (p < 0 && p >= -1e-9) return 0;
  return p;
}

/**
 * The uniform prefix allocation of the ablation (deterministic, no predictor): each of the P prefixes
 * gets ⌊budget / P⌋ continuations, and the budget mod P left over goes one each to the shallowest
 * prefixes first (depth t, then input order — one per rollout at t = 1 before any at t = 2), so no
 * rollout is favoured by its position in the input. Returns K in input order.
 */
export function evenPrefixes(prefixes: readonly PrefixCandidate[], budget: number): number[] {
  const P = prefixes.length;
  if (P === 0) return [];
  const k = prefixes.map(() => Math.floor(budget / P));
  const order = prefixes.map((c, i) => ({ d: c.depth, i })).sort((a, b) => a.d - b.d || a.i - b.i);
  for (let u = 0; u < budget % P; u++) k[order[u].i]++;
  return k;
}

/** Drops K = 0 entries: a plan lists expanded prefixes only. */
export function positive(ids: readonly string[], k: readonly number[]): Map<string, number> {
  const plan = new Map<string, number>();
  ids.forEach((id, i) => {
    if (k[i] > 0) plan.set(id, k[i]);
  });
  return plan;
}
