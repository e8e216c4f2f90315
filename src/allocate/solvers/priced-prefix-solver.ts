import { AllocationInputError } from '../errors.ts';
import { flipChance, repeatChance, type PrefixAllocation, type PrefixInput } from './prefix-value.ts';

/**
 * Most (prefix, budget unit) cells the table may hold (Int32 choices: 64 MB). Above it the costs are
 * scaled down and rounded up (see solvePricedPrefixes), so memory and time stay bounded whatever the
 * budget is in tokens.
 */
export const PRICED_TABLE_LIMIT = 16_777_216;

/** Budget units the dynamic programme works in at most; larger token budgets are scaled to this. */
export const PRICED_BUDGET_UNITS = 4096;

/**
 * Prefix expansion at a budget in turns or tokens: maximise Σ_j w_j (1 − ρ_j^K_j)
 * subject to Σ_j c_j K_j ≤ budget, K_j ≥ 0 integers, c_j ≥ 1 integer costs.
 *
 * Each term is concave in K but the costs differ, so taking the best gain per unit of cost is not exact
 * (a cheap prefix's first continuation can crowd out an expensive one that fits the rest exactly). The
 * exact method is a dynamic programme over prefixes and budget: best[j][b] = max over K of
 * best[j − 1][b − c_j K] + w_j (1 − ρ_j^K); O(Σ_j budget · budget / c_j) time, one choice per cell.
 *
 * A budget above PRICED_BUDGET_UNITS is first expressed in coarser units: budget' = PRICED_BUDGET_UNITS,
 * c_j' = ⌈c_j · budget' / budget⌉. Rounding costs up keeps every solution feasible at the true costs;
 * the answer is exact for the rounded costs (each continuation overpriced by under one coarse unit,
 * budget / 4096 of the true unit). On ties (within 1e-12) the earlier prefix takes more continuations,
 * as in the unpriced greedy.
 */
export function solvePricedPrefixes(prefixes: readonly PrefixInput[], budget: number): PrefixAllocation {
  const n = prefixes.length;
  const scale = budget > PRICED_BUDGET_UNITS ? PRICED_BUDGET_UNITS / budget : 1;
  const C = scale === 1 ? budget : PRICED_BUDGET_UNITS;
  const cost = prefixes.map((p) => (scale === 1 ? (p.cost ?? 1) : Math.ceil((p.cost ?? 1) * scale - 1e-9)));
  if (n * (C + 1) > PRICED_TABLE_LIMIT)
    throw new AllocationInputError(
      'prefixes',
      `${n} prefixes × ${C + 1} budget units exceed the priced solver's limit of ${PRICED_TABLE_LIMIT.toLocaleString('en')} cells; lower the budget or the number of prefixes`,
    );
  const rho = prefixes.map(({ q, r }) => repeatChance(q, r));
  const w = prefixes.map((p) => p.w ?? 1);
  const value = (j: number, K: number) => w[j] * flipChance(rho[j], K);
  let best = new Float64Array(C + 1);
  const choice = new Int32Array(n * (C + 1));
  // Prefixes are added last first, so that best[b] after prefix j is the optimum over j..n−1 and the
  // reconstruction walks in input order, each prefix taking the largest K among its ties.
  for (let j = n - 1; j >= 0; j--) {
    const next = new Float64Array(C + 1);
    const c = cost[j];
    for (let b = 0; b <= C; b++) {
      let top = best[b];
      let arg = 0;
      for (let K = 1; K * c <= b; K++) {
        const v = best[b - K * c] + value(j, K);
        if (v > top - 1e-12) [top, arg] = [v, K];
      }
      next[b] = top;
      choice[j * (C + 1) + b] = arg;
    }
    best = next;
  }
  const k = new Array<number>(n).fill(0);
  let b = C;
  for (let j = 0; j < n; j++) {
    k[j] = choice[j * (C + 1) + b];
    b -= k[j] * cost[j];
  }
  let objective = 0;
  for (let j = 0; j < n; j++) objective += value(j, k[j]);
  return { k, objective };
}
