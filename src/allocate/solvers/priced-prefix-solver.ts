import { AllocationInputError } from '../errors.ts';
import { flipChance, flipGain, repeatChance, type PrefixAllocation, type PrefixInput } from './prefix-value.ts';

/**
 * Most (prefix, budget unit) cells the table may hold (Int32 choices: 64 MB). Above it the costs are
 * scaled down and rounded up (see solvePricedPrefixes), so memory and time stay bounded whatever the
 * budget is in tokens.
 */
export const PRICED_TABLE_LIMIT = 16_777_216;

/** Budget units the dynamic programme works in at most; larger token budgets are scaled to this. */
export const PRICED_BUDGET_UNITS = 4096;

/**
 * Steps of the programme's inner loop allowed for one solve (about 0.1 s). The exact programme costs
 * Σ_j C²/(2 c_j) steps over C budget units: many cheap prefixes at a large budget reach 10⁹ (seconds
 * per prompt, blocking the event loop that runs every rollout). Past the cap the units are coarsened
 * until it fits (see solvePricedPrefixes).
 */
export const PRICED_WORK_LIMIT = 20_000_000;

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
 *
 * Bounded: when that programme would take more than `workLimit` steps (pricedUnits), the units are
 * coarsened further, to the most that fit the cap. The answer is then the approximation stated above at
 * the coarser unit (exact for costs rounded up to whole units of budget / units, so never over the
 * budget), after which the budget the rounding left is topped up greedily at the true costs, the best
 * gain per unit of cost first among continuations that still fit. Below the cap nothing changes: the
 * same programme, the same answer.
 */
export function solvePricedPrefixes(prefixes: readonly PrefixInput[], budget: number, workLimit: number = PRICED_WORK_LIMIT): PrefixAllocation {
  const n = prefixes.length;
  const { units: C, exact } = pricedUnits(prefixes, budget, workLimit);
  const scale = C === budget ? 1 : C / budget;
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
    // value(j, K) for every K that fits, computed once per prefix (the same numbers, so the same answer).
    const gain = new Float64Array(Math.floor(C / c) + 1);
    for (let K = 1; K < gain.length; K++) gain[K] = value(j, K);
    for (let b = 0; b <= C; b++) {
      let top = best[b];
      let arg = 0;
      for (let K = 1, at = b - c; at >= 0; K++, at -= c) {
        const v = best[at] + gain[K];
        if (v > top - 1e-12) {
          top = v;
          arg = K;
        }
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
  if (!exact) topUp(k, prefixes, budget, w, rho);
  let objective = 0;
  for (let j = 0; j < n; j++) objective += value(j, k[j]);
  return { k, objective };
}

/**
 * The budget units the solve works in, and whether its answer is exact: the finest units up to
 * min(budget, PRICED_BUDGET_UNITS) whose programme takes at most `workLimit` inner steps.
 */
export function pricedUnits(prefixes: readonly PrefixInput[], budget: number, workLimit: number = PRICED_WORK_LIMIT): { units: number; exact: boolean } {
  const full = Math.min(budget, PRICED_BUDGET_UNITS);
  const work = (C: number) => {
    let steps = 0;
    for (const p of prefixes) {
      const c = C === budget ? (p.cost ?? 1) : Math.ceil((p.cost ?? 1) * (C / budget) - 1e-9);
      steps += ((C + 1) * C) / (2 * Math.max(1, c)) + C + 1;
    }
    return steps;
  };
  if (full <= 1 || work(full) <= workLimit) return { units: full, exact: true };
  let lo = 1;
  let hi = full - 1;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (work(mid) <= workLimit) lo = mid;
    else hi = mid - 1;
  }
  return { units: lo, exact: false };
}

/** Spends what coarse units left: one continuation at a time, the best gain per true cost that still fits. */
function topUp(k: number[], prefixes: readonly PrefixInput[], budget: number, w: readonly number[], rho: readonly number[]): void {
  const cost = prefixes.map((p) => p.cost ?? 1);
  let left = budget - k.reduce((a, K, j) => a + K * cost[j], 0);
  for (;;) {
    let best = -1;
    let bestRate = 0;
    for (let j = 0; j < k.length; j++) {
      if (cost[j] > left) continue;
      const rate = (w[j] * flipGain(rho[j], k[j] + 1)) / cost[j];
      if (rate > bestRate) [best, bestRate] = [j, rate];
    }
    if (best < 0) return;
    k[best]++;
    left -= cost[best];
  }
}
