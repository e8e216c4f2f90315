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
  const { n, min, L } = t;
  const max = min + L;
  const prune = options.prune ?? true;
  const bound = prune ? lagrangianBound(t, order, M) : { floor: -Infinity, lambda: 0, rest: new Float64Array(n + 1) };
  // Two layers swapped per prompt: best_{i−1} and best_i, with the prompts selected on the best path
  // to each state (the second key, so equal values prefer more prompts).
  let best: Layer = { value: new Float64Array(M + 1).fill(-Infinity), count: new Int32Array(M + 1), lo: 0, hi: 0 };
  let next: Layer = { value: new Float64Array(M + 1).fill(-Infinity), count: new Int32Array(M + 1), lo: 0, hi: 0 };
  best.value[0] = 0;
  const choices: Choice[] = [];
  const cellLimit = options.cellLimit ?? DP_CELL_LIMIT;
  let cells = 0;
  const g = new Float64Array(L + 1);
  for (let i = 0; i < n; i++) {
    promptValues(t, i, g);
    const lo = best.lo;
    const hi = Math.min(M, best.hi + max);
    cells += hi - lo + 1;
    if (cells > cellLimit) throw new DpTooLargeError(cells, cellLimit, n, M);
    choices.push({ lo, m: extend(best, next, g, { lo, hi, min, max, scale: t.scale }) });
    // Keep the band of states that can still be completed and can still reach the known solution.
    const need = M - (n - 1 - i) * max;
    const rest = bound.rest[i + 1];
    const alive = (x: number) => next.value[x] > -Infinity && (!prune || next.value[x] + bound.lambda * (M - x) + rest >= bound.floor);
    const [a, b] = liveBand(Math.max(lo, need), hi, alive);
    if (a > b) throw new Error(`internal: no DP state survives prompt ${i}`);
    [best, next] = [next, best];
    next.value.fill(-Infinity, next.lo, next.hi + 1);
    for (let x = lo; x < a; x++) best.value[x] = -Infinity;
    for (let x = b + 1; x <= hi; x++) best.value[x] = -Infinity;
    best.lo = a;
    best.hi = b;
  }
  return traceBack(choices, n, M);
}

/** One layer of the DP: best value and prompts selected per budget x, live on [lo, hi]. */
interface Layer {
  value: Float64Array;
  count: Int32Array;
  lo: number;
  hi: number;
}

/** The units one prompt takes in each state of its layer (states from `lo`). */
interface Choice {
  lo: number;
  m: Uint8Array | Uint16Array;
}

/**
 * The pruning bound's pieces: floor = the sweep's known solution value less the DP's tie margin, the
 * dual minimiser λ̂, and rest[i] = Σ_{j≥i} max(0, max_m g_j(m) − λ̂m), the most prompts i.. can add.
 */
function lagrangianBound(t: Table, order: Int32Array, M: number): { floor: number; lambda: number; rest: Float64Array } {
  const { n, min, L, base, tails, cum } = t;
  const max = min + L;
  const known = solveBySweep(t, order, M);
  let lower = 0;
  for (let i = 0; i < n; i++) if (known[i] > 0) lower += base[i] + (known[i] > min ? cum[i * L + known[i] - min - 1] : 0);
  const lambda = lagrangianGuess(t, order, M).lambda;
  const rest = new Float64Array(n + 1);
  for (let i = n - 1; i >= 0; i--) {
    let surplus = 0;
    for (let m = min, g = base[i]; m <= max; g += m < max ? tails[i * L + m - min] : 0, m++) surplus = Math.max(surplus, g - lambda * m);
    rest[i] = rest[i + 1] + surplus;
  }
  return { floor: lower - DP_TIE * Math.max(1, Math.abs(lower)) * n, lambda, rest };
}

/** g[k] = g_i(m_min + k) for k = 0..L: prompt i's value at each count it may take. */
function promptValues(t: Table, i: number, g: Float64Array): void {
  g[0] = t.base[i];
  for (let k = 0; k < t.L; k++) g[k + 1] = g[k] + t.tails[i * t.L + k];
}

/**
 * One prompt's step of the DP: best_i[x] = max(best_{i−1}[x], max_{m ∈ [m_min, m_max]} best_{i−1}[x − m] + g_i(m))
 * for x in [lo, hi], written into `out`; returns the m chosen per x (0: the prompt is left out).
 */
function extend(prev: Layer, out: Layer, g: Float64Array, o: { lo: number; hi: number; min: number; max: number; scale: number }): Uint8Array | Uint16Array {
  const { lo, hi, min, max, scale } = o;
  const pick = max <= 255 ? new Uint8Array(hi - lo + 1) : new Uint16Array(hi - lo + 1);
  for (let x = lo; x <= hi; x++) {
    let bx = x <= prev.hi ? prev.value[x] : -Infinity;
    let bc = x <= prev.hi ? prev.count[x] : 0;
    let bm = 0;
    const mFrom = Math.max(min, x - prev.hi);
    const mTo = Math.min(max, x - prev.lo);
    for (let mm = mFrom; mm <= mTo; mm++) {
      const cand = prev.value[x - mm] + g[mm - min];
      const cc = prev.count[x - mm] + 1;
      // (value, prompts selected) lexicographically, values within DP_TIE equal: on equal value the
      // wider selection wins (as in the sweep); on equal value and width fewer units for this prompt
      // (0 first) win, so later prompts are left out and lower indices selected, as in the sweep.
      if (cand > bx + DP_TIE * scale || (cand > -Infinity && cand >= bx - DP_TIE * scale && cc > bc)) {
        bx = cand;
        bc = cc;
        bm = mm;
      }
    }
    out.value[x] = bx;
    out.count[x] = bc;
    pick[x - lo] = bm;
  }
  return pick;
}

/** The states of [a, b] left once dead ones are trimmed from both ends (a > b: none). */
function liveBand(a: number, b: number, alive: (x: number) => boolean): [number, number] {
  while (a <= b && !alive(a)) a++;
  while (b >= a && !alive(b)) b--;
  return [a, b];
}

/** The optimal counts, read back from the last prompt's choice at budget M to the first. */
function traceBack(choices: readonly Choice[], n: number, M: number): Int32Array {
  const m = new Int32Array(n);
  let x = M;
  for (let i = n - 1; i >= 0; i--) {
    m[i] = choices[i].m[x - choices[i].lo];
    x -= m[i];
  }
  return m;
}
