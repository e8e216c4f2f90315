import { AllocationInputError, InfeasibleBudgetError } from './errors.ts';
import { isSpendable, spendableAbove, spendableBelow, type Bounds } from './feasibility.ts';
import { mixedChance } from './mixed-value.ts';
import { solveBySweep } from './prefix-sweep.ts';
import { buildTable, type Table, type WeightedItem } from './value-table.ts';

export type { WeightedItem };

/**
 * The one exact solver behind root allocation and Knapsack-RL allocation:
 *
 *   maximise Σ_i w_i · V_root(v_i, m_i)   s.t.  Σ_i m_i = M,  m_i ∈ {0} ∪ [m_min, m_max],  m_min ≥ 2.
 *
 * (TRACE: w_i = 1. Knapsack-RL: v_i = p_i, w_i = p_i(1 − p_i)².) Write g_i(m) = w_i V_root(v_i, m).
 * On [m_min, m_max] g_i is concave, but entering costs m_min units at once, so greedy is not exact.
 *
 * Exact method (docs/allocation.md has the full argument):
 *  1. If the prompts can be ordered so that each one's g is ≥ the next one's at every m in
 *     [m_min, m_max] (pointwise dominance — always true when all w_i are equal: V_root(v, m) grows as
 *     v nears 1/2, for every m), some optimum selects a prefix of that order (swap a selected
 *     dominated prompt for an unselected dominating one, keeping its m: the value cannot drop).
 *     For a prefix of s prompts each gets m_min and the rest R = M − s·m_min goes to the R largest
 *     marginal gains among them (exact: concave). prefix-sweep.ts finds the best s: Lagrangian upper
 *     bounds rule out most s, and an exact sweep (a min-heap of taken gains) covers the rest.
 *  2. Otherwise (weighted prompts whose curves cross) an exact dynamic programme over prompts and
 *     budget, O(n · M · (m_max − m_min)).
 *
 * Ties are broken deterministically: among equal prompts the lower index is selected first and gets
 * extra units first; between selection sizes of equal value the smaller wins (e.g. 3 · V_root(v, 2) =
 * 2 · V_root(v, 3)). Values equal within 1e-9 (relative) count as ties.
 */
export interface SolveOptions extends Bounds {
  budget: number;
  /**
   * Force a method (tests, benchmarks); default 'auto' = sweep when a dominance order exists, else dp.
   * 'full-sweep' is the sweep without the Lagrangian pruning of prefix sizes (slower, same answer).
   */
  method?: 'auto' | 'sweep' | 'full-sweep' | 'dp';
  /** Field names for error messages (the CLI passes its JSON field names). */
  fields?: { values?: string; budget?: string };
}

export interface Allocation {
  /** m_i in input order. */
  m: number[];
  /** Σ_i w_i V_root(v_i, m_i), recomputed from m. */
  objective: number;
  method: 'sweep' | 'dp' | 'trivial';
}

/** Dynamic programming is refused above this many cells (n · (M + 1)); the sweep has no such limit. */
export const DP_CELL_LIMIT = 60_000_000;
// Tie margin of the DP and slack of the dominance check: rounding only (the DP compares n times along
// a path, so it must be tighter than the sweep's 1e-9).
const DP_TIE = 1e-12;

export function solveWeighted(items: readonly WeightedItem[], options: SolveOptions): Allocation {
  validate(items, options);
  const { budget: M, min, max } = options;
  const n = items.length;
  if (!isSpendable(n, M, options)) {
    const detail = M > n * max ? `${n} prompts × m_max ${max} = ${n * max} < ${M}` : `every selected prompt takes between ${min} and ${max}`;
    throw new InfeasibleBudgetError(options.fields?.budget ?? 'budget', M, spendableBelow(n, M, options), spendableAbove(n, M, options), detail);
  }
  if (M === 0) return { m: new Array(n).fill(0), objective: 0, method: 'trivial' };
  const table = buildTable(items, min, max);
  const method = options.method ?? 'auto';
  const order = method === 'dp' ? null : dominanceOrder(table);
  if ((method === 'sweep' || method === 'full-sweep') && !order) throw new AllocationInputError('method', 'no dominance order exists for these prompts; use "dp" or "auto"');
  let m: Int32Array;
  if (order) m = solveBySweep(table, order, M, { prune: method !== 'full-sweep' });
  else {
    if (n * (M + 1) > DP_CELL_LIMIT) throw new AllocationInputError(options.fields?.budget ?? 'budget', `the weighted curves cross, and the exact DP over ${n} prompts × ${M + 1} budgets exceeds ${DP_CELL_LIMIT} cells; lower the budget or the prompt count`);
    m = dynamicProgramme(table, M);
  }
  const out = Array.from(m);
  let objective = 0;
  for (let i = 0; i < n; i++) objective += items[i].w * mixedChance(items[i].v, out[i]);
  return { m: out, objective, method: order ? 'sweep' : 'dp' };
}

function validate(items: readonly WeightedItem[], o: SolveOptions): void {
  const vf = o.fields?.values ?? 'v';
  const bf = o.fields?.budget ?? 'budget';
  if (!Number.isInteger(o.budget) || o.budget < 0) throw new AllocationInputError(bf, `must be a non-negative integer, got ${o.budget}`);
  if (!Number.isInteger(o.min) || o.min < 2) throw new AllocationInputError('min', `m_min must be an integer ≥ 2 (V_root(v, 1) = 0), got ${o.min}`);
  if (!Number.isInteger(o.max) || o.max < o.min || o.max > 65_535) throw new AllocationInputError('max', `m_max must be an integer in [min (${o.min}), 65535], got ${o.max}`);
  items.forEach(({ v, w }, i) => {
    if (!(v >= 0 && v <= 1)) throw new AllocationInputError(`${vf}[${i}]`, `must be a probability in [0, 1], got ${v}`);
    if (!(w >= 0 && Number.isFinite(w))) throw new AllocationInputError(`${vf}[${i}]`, `weight must be finite and ≥ 0, got ${w}`);
  });
}

/** Sorted so each prompt dominates the next at every m in [m_min, m_max]; null when impossible. */
function dominanceOrder(t: Table): Int32Array | null {
  const { n, L, base, tails } = t;
  const last = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    let g = base[i];
    for (let k = 0; k < L; k++) g += tails[i * L + k];
    last[i] = g;
  }
  const order = Int32Array.from({ length: n }, (_, i) => i).sort((a, b) => base[b] - base[a] || last[b] - last[a] || a - b);
  // Rounding slack only: a pair that crosses by more than this has no dominance order (→ DP).
  const tol = DP_TIE * t.scale;
  for (let r = 0; r + 1 < n; r++) {
    const i = order[r];
    const j = order[r + 1];
    let gi = base[i];
    let gj = base[j];
    if (gi < gj - tol) return null;
    for (let k = 0; k < L; k++) {
      gi += tails[i * L + k];
      gj += tails[j * L + k];
      if (gi < gj - tol) return null;
    }
  }
  return order;
}

/** Step 2: exact DP. best[x] = max value of the prompts so far using exactly x units. */
function dynamicProgramme(t: Table, M: number): Int32Array {
  const { n, min, L, base, tails } = t;
  const max = min + L;
  let best = new Float64Array(M + 1).fill(-Infinity);
  best[0] = 0;
  // m per (prompt, budget) cell: one byte when m_max ≤ 255 (the usual case), else two.
  const choice = max <= 255 ? new Uint8Array(n * (M + 1)) : new Uint16Array(n * (M + 1));
  const g = new Float64Array(L + 1);
  let reach = 0;
  for (let i = 0; i < n; i++) {
    g[0] = base[i];
    for (let k = 0; k < L; k++) g[k + 1] = g[k] + tails[i * L + k];
    const next = best.slice();
    reach = Math.min(M, reach + max);
    for (let x = min; x <= reach; x++) {
      let bx = next[x];
      let bm = 0;
      const top = Math.min(max, x);
      for (let mm = min; mm <= top; mm++) {
        const cand = best[x - mm] + g[mm - min];
        // Strictly better only: on ties fewer units for this prompt (0 first) win, so on equal value
        // later prompts are left out and lower indices selected, as in the sweep.
        if (cand > bx + DP_TIE * t.scale) {
          bx = cand;
          bm = mm;
        }
      }
      next[x] = bx;
      choice[i * (M + 1) + x] = bm;
    }
    best = next;
  }
  const m = new Int32Array(n);
  let x = M;
  for (let i = n - 1; i >= 0; i--) {
    m[i] = choice[i * (M + 1) + x];
    x -= m[i];
  }
  return m;
}
