import { lagrangianGuess, solveBySweep } from './prefix-sweep.ts';
import type { Table } from './value-table.ts';

// Tie margin of the DP (rounding only: it compares n times along a path).
const DP_TIE = 1e-12;

/** The DP keeps at most this many (prompt, budget) cells (one byte each when m_max ≤ 255). */
export const DP_CELL_LIMIT = 100_000_000;

/** The pruned DP still needed more cells than allowed (curves that cross everywhere, huge budgets). */
export class DpTooLargeError extends Error {
  override name = 'DpTooLargeError';
  constructor(cells: number, limit: number, n: number, M: number) {
    super(`the exact DP over ${n} prompts and budget ${M} needs more than ${limit} cells (${cells} so far); lower the budget or the number of prompts`);
  }
}

/**
 * Step 2 of the weighted solver, for prompts without a dominance order: an exact dynamic programme
 * over prompts and budget, best_i[x] = max value of prompts 0..i using exactly x units, pruned by a
 * Lagrangian bound so only a band of x around the optimum's path is kept (branch-and-bound on DP
 * states; exact, because a state is dropped only when no completion of it can reach a known solution):
 *
 *   any completion of state (i, x) is worth ≤ best_i[x] + λ̂(M − x) + Σ_{j>i} max(0, max_m g_j(m) − λ̂m)
 *
 * for every λ̂ (Lagrangian relaxation of Σ m = M for the prompts after i); λ̂ is the dual minimiser
 * (where best responses demand M), and the known solution is the best prefix allocation in the order
 * (g(m_min), g(m_max)) found by the sweep. Without pruning (`prune: false`) it is the plain DP,
 * O(n · M · (m_max − m_min)). States with x > M − (units the later prompts must take) are also dropped.
 */
export function solveByDp(t: Table, order: Int32Array, M: number, options: { prune?: boolean; cellLimit?: number } = {}): Int32Array {
  const { n, min, L, base, tails, cum } = t;
  const max = min + L;
  const prune = options.prune ?? true;
  // Known solution (lower bound) and the bound's λ̂ and suffix surpluses.
  let lower = -Infinity;
  let lambda = 0;
  const rest = new Float64Array(n + 1);
  if (prune) {
    const known = solveBySweep(t, order, M);
    lower = 0;
    for (let i = 0; i < n; i++) if (known[i] > 0) lower += base[i] + (known[i] > min ? cum[i * L + known[i] - min - 1] : 0);
    lambda = lagrangianGuess(t, order, M).lambda;
    for (let i = n - 1; i >= 0; i--) {
      let surplus = 0;
      for (let m = min, g = base[i]; m <= max; g += m < max ? tails[i * L + m - min] : 0, m++) surplus = Math.max(surplus, g - lambda * m);
      rest[i] = rest[i + 1] + surplus;
    }
  }
  const floor = lower - DP_TIE * Math.max(1, Math.abs(lower)) * n;
  let best = new Float64Array(M + 1).fill(-Infinity);
  let next = new Float64Array(M + 1).fill(-Infinity);
  // Prompts selected on the best path to each state: the second key, so equal values prefer more prompts.
  let count = new Int32Array(M + 1);
  let nextCount = new Int32Array(M + 1);
  best[0] = 0;
  let lo = 0;
  let hi = 0;
  const choices: Array<{ lo: number; m: Uint8Array | Uint16Array }> = [];
  const cellLimit = options.cellLimit ?? DP_CELL_LIMIT;
  let cells = 0;
  const g = new Float64Array(L + 1);
  const scale = t.scale;
  for (let i = 0; i < n; i++) {
    g[0] = base[i];
    for (let k = 0; k < L; k++) g[k + 1] = g[k] + tails[i * L + k];
    const nlo = lo;
    const nhi = Math.min(M, hi + max);
    cells += nhi - nlo + 1;
    if (cells > cellLimit) throw new DpTooLargeError(cells, cellLimit, n, M);
    const pick = max <= 255 ? new Uint8Array(nhi - nlo + 1) : new Uint16Array(nhi - nlo + 1);
    for (let x = nlo; x <= nhi; x++) {
      let bx = x <= hi ? best[x] : -Infinity;
      let bc = x <= hi ? count[x] : 0;
      let bm = 0;
      const mFrom = Math.max(min, x - hi);
      const mTo = Math.min(max, x - lo);
      for (let mm = mFrom; mm <= mTo; mm++) {
        const cand = best[x - mm] + g[mm - min];
        const cc = count[x - mm] + 1;
        // (value, prompts selected) lexicographically, values within DP_TIE equal: on equal value the
        // wider selection wins (as in the sweep); on equal value and width fewer units for this prompt
        // (0 first) win, so later prompts are left out and lower indices selected, as in the sweep.
        if (cand > bx + DP_TIE * scale || (cand > -Infinity && cand >= bx - DP_TIE * scale && cc > bc)) {
          bx = cand;
          bc = cc;
          bm = mm;
        }
      }
      next[x] = bx;
      nextCount[x] = bc;
      pick[x - nlo] = bm;
    }
    // Keep the band of states that can still be completed and can still reach the known solution.
    const need = M - (n - 1 - i) * max;
    let a = Math.max(nlo, need);
    let b = nhi;
    const alive = (x: number) => next[x] > -Infinity && (!prune || next[x] + lambda * (M - x) + rest[i + 1] >= floor);
    while (a <= b && !alive(a)) a++;
    while (b >= a && !alive(b)) b--;
    if (a > b) throw new Error(`internal: no DP state survives prompt ${i}`);
    choices.push({ lo: nlo, m: pick });
    [best, next] = [next, best];
    [count, nextCount] = [nextCount, count];
    next.fill(-Infinity, lo, hi + 1);
    for (let x = nlo; x < a; x++) best[x] = -Infinity;
    for (let x = b + 1; x <= nhi; x++) best[x] = -Infinity;
    lo = a;
    hi = b;
  }
  const m = new Int32Array(n);
  let x = M;
  for (let i = n - 1; i >= 0; i--) {
    m[i] = choices[i].m[x - choices[i].lo];
    x -= m[i];
  }
  return m;
}
