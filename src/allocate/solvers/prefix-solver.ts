import { AllocationInputError, InfeasibleBudgetError } from '../errors.ts';
import { IndexedHeap } from './indexed-heap.ts';
import { solvePricedPrefixes } from './priced-prefix-solver.ts';
import { flipChance, flipGain, repeatChance, type PrefixAllocation, type PrefixInput } from './prefix-value.ts';

// Callers import the prefix problem from here, with its solver.
export { flipChance, flipGain, repeatChance, type PrefixAllocation, type PrefixInput } from './prefix-value.ts';

/**
 * TRACE prefix expansion for one prompt (TRACE-SPEC §3 step 4). For prefix (j, t) with observed
 * reward r and q = Ṽ(H(i, j, t)):
 *   ρ = r·q + (1 − r)(1 − q)     chance a new continuation repeats the observed outcome
 *   V_pref(K) = 1 − ρ^K          chance at least one of K continuations flips it
 * Maximise Σ V_pref(K) with Σ K = budget, K ≥ 0. The marginal gain of the K-th continuation,
 * ρ^(K−1)(1 − ρ), does not increase in K, so taking the largest marginal gain budget times is exact
 * (each prefix's gains are a non-increasing sequence; the top-`budget` gains of the union are a prefix
 * of each sequence). Ties go to the earlier prefix in input order.
 *
 * With costs (budgets in turns or tokens: a continuation's cost is the suffix it regenerates), the
 * constraint becomes Σ c·K ≤ budget and greedy is no longer exact; priced-prefix-solver.ts solves that
 * case exactly. With every cost 1 the two agree and this greedy runs.
 */
export function solvePrefixes(prefixes: readonly PrefixInput[], budget: number): PrefixAllocation {
  if (!Number.isInteger(budget) || budget < 0) throw new AllocationInputError('budget', `must be a non-negative integer, got ${budget}`);
  prefixes.forEach(({ q, r, w, cost }, i) => {
    if (cost !== undefined && !(Number.isInteger(cost) && cost >= 1))
      throw new AllocationInputError(`prefixes[${i}].cost`, `must be an integer ≥ 1, got ${cost}`);
    if (w !== undefined && !(w >= 0 && Number.isFinite(w))) throw new AllocationInputError(`prefixes[${i}].w`, `must be a finite weight ≥ 0, got ${w}`);
    if (!(q >= 0 && q <= 1)) throw new AllocationInputError(`prefixes[${i}].q`, `must be a probability in [0, 1], got ${q}`);
    if (!(r >= 0 && r <= 1)) throw new AllocationInputError(`prefixes[${i}].r`, `must be a reward in [0, 1], got ${r}`);
  });
  const n = prefixes.length;
  if (n === 0 && budget > 0) throw new InfeasibleBudgetError('budget', budget, 0, null, 'there are no prefixes to continue from');
  if (prefixes.some((p) => (p.cost ?? 1) !== 1)) return solvePricedPrefixes(prefixes, budget);
  const rho = prefixes.map(({ q, r }) => repeatChance(q, r));
  const k = new Array<number>(n).fill(0);
  const heap = new IndexedHeap(n, true);
  const w = prefixes.map((p) => p.w ?? 1);
  // Weighted gains w·ρ^(K−1)(1 − ρ) still do not increase in K, so greedy stays exact.
  for (let i = 0; i < n; i++) heap.set(i, w[i] * (1 - rho[i]));
  for (let u = 0; u < budget; u++) {
    const i = heap.top();
    k[i]++;
    heap.set(i, w[i] * flipGain(rho[i], k[i] + 1));
  }
  let objective = 0;
  for (let i = 0; i < n; i++) objective += w[i] * flipChance(rho[i], k[i]);
  return { k, objective };
}
