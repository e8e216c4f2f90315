import { AllocationInputError, InfeasibleBudgetError } from '../errors.ts';
import { isSpendable, selectableCounts, spendableAbove, spendableBelow, type Bounds } from './feasibility.ts';
import { mixedChance } from './mixed-value.ts';
import { DpTooLargeError, solveByDp } from './bounded-dp.ts';
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
 *     budget (bounded-dp.ts), pruned by a Lagrangian bound to a band of budgets around the optimum;
 *     O(n · M · (m_max − m_min)) without the pruning.
 *
 * Ties are broken deterministically: among equal prompts the lower index is selected first and gets
 * extra units first; between selection sizes of equal value the LARGER wins (e.g. 3 · V_root(v, 2) =
 * 2 · V_root(v, 3): M = 6 over equal prompts gives [2, 2, 2], not [3, 3, 0]), so at cold start
 * (every v = ½) the budget is spread as widely as m_min allows — the uniform GRPO-like allocation
 * TRACE-SPEC §3 expects, and the wider root coverage the paper's ablation favours. Values equal
 * within 1e-9 (relative) count as ties.
 */
export interface SolveOptions extends Bounds {
  budget: number;
  /**
   * Force a method (tests, benchmarks); default 'auto' = sweep when a dominance order exists, else dp.
   * 'full-sweep' / 'full-dp' are the same methods without their Lagrangian pruning (slower, same answer).
   */
  method?: 'auto' | 'sweep' | 'full-sweep' | 'dp' | 'full-dp';
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

/**
 * Most (prompt, unit) entries the solver's tables may hold: two Float64 arrays of this length ≈ 256 MB.
 * Bounds memory whatever m_max is asked for (docs/reliability.md).
 */
export const TABLE_LIMIT = 16_777_216;

// Slack of the dominance check: rounding only.
const ORDER_SLACK = 1e-12;

export function solveWeighted(items: readonly WeightedItem[], options: SolveOptions): Allocation {
  validate(items, options);
  const { budget: M, min } = options;
  const n = items.length;
  if (!isSpendable(n, M, options)) {
    const detail =
      M > n * options.max ? `${n} prompts × m_max ${options.max} = ${n * options.max} < ${M}` : `every selected prompt takes between ${min} and ${options.max}`;
    throw new InfeasibleBudgetError(options.fields?.budget ?? 'budget', M, spendableBelow(n, M, options), spendableAbove(n, M, options), detail);
  }
  if (M === 0) return { m: new Array(n).fill(0), objective: 0, method: 'trivial' };
  // Every feasible allocation selects s ≥ lo prompts, so none gives a prompt more than M − (lo − 1)·m_min:
  // m_max above that changes nothing but the size of the tables (n × (m_max − m_min) numbers).
  const { lo } = selectableCounts(n, M, options);
  const max = Math.min(options.max, M - (lo - 1) * min);
  const entries = n * (max - min);
  if (entries > TABLE_LIMIT) {
    const fits = min + Math.floor(TABLE_LIMIT / Math.max(1, n));
    throw new AllocationInputError(
      'max',
      `${n.toLocaleString('en')} prompts × (m_max ${max.toLocaleString('en')} − m_min ${min}) = ${entries.toLocaleString('en')} table entries exceed the solver's limit of ${TABLE_LIMIT.toLocaleString('en')} (${(TABLE_LIMIT * 16) / 2 ** 20} MB); lower max to at most ${fits.toLocaleString('en')} (or the budget)`,
    );
  }
  const table = buildTable(items, min, max);
  const method = options.method ?? 'auto';
  const order = candidateOrder(table);
  const dominant = method !== 'dp' && method !== 'full-dp' && isDominanceOrder(table, order);
  if ((method === 'sweep' || method === 'full-sweep') && !dominant)
    throw new AllocationInputError('method', 'no dominance order exists for these prompts; use "dp" or "auto"');
  let m: Int32Array;
  if (dominant) m = solveBySweep(table, order, M, { prune: method !== 'full-sweep' });
  else {
    try {
      m = solveByDp(table, order, M, { prune: method !== 'full-dp' });
    } catch (e) {
      if (e instanceof DpTooLargeError) throw new AllocationInputError(options.fields?.budget ?? 'budget', e.message);
      throw e;
    }
  }
  const out = Array.from(m);
  let objective = 0;
  for (let i = 0; i < n; i++) objective += items[i].w * mixedChance(items[i].v, out[i]) + (out[i] > 0 ? (items[i].perUnit ?? 0) * out[i] : 0);
  return { m: out, objective, method: dominant ? 'sweep' : 'dp' };
}

function validate(items: readonly WeightedItem[], o: SolveOptions): void {
  const vf = o.fields?.values ?? 'v';
  const bf = o.fields?.budget ?? 'budget';
  if (!Number.isInteger(o.budget) || o.budget < 0) throw new AllocationInputError(bf, `must be a non-negative integer, got ${o.budget}`);
  if (!Number.isInteger(o.min) || o.min < 2) throw new AllocationInputError('min', `m_min must be an integer ≥ 2 (V_root(v, 1) = 0), got ${o.min}`);
  if (!Number.isInteger(o.max) || o.max < o.min || o.max > 65_535)
    throw new AllocationInputError('max', `m_max must be an integer in [min (${o.min}), 65535], got ${o.max}`);
  items.forEach(({ v, w }, i) => {
    if (!(v >= 0 && v <= 1)) throw new AllocationInputError(`${vf}[${i}]`, `must be a probability in [0, 1], got ${v}`);
    if (!(w >= 0 && Number.isFinite(w))) throw new AllocationInputError(`${vf}[${i}]`, `weight must be finite and ≥ 0, got ${w}`);
    const b = items[i].perUnit ?? 0;
    if (!(b >= 0 && Number.isFinite(b))) throw new AllocationInputError(`${vf}[${i}]`, `per-unit value must be finite and ≥ 0, got ${b}`);
  });
}

/** Prompts by (g(m_min), g(m_max)) descending, then index: the dominance order when one exists. */
function candidateOrder(t: Table): Int32Array {
  const { n, L, base, tails } = t;
  const last = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    let g = base[i];
    for (let k = 0; k < L; k++) g += tails[i * L + k];
    last[i] = g;
  }
  return Int32Array.from({ length: n }, (_, i) => i).sort((a, b) => base[b] - base[a] || last[b] - last[a] || a - b);
}

/** True when each prompt in `order` dominates the next at every m in [m_min, m_max]. */
function isDominanceOrder(t: Table, order: Int32Array): boolean {
  const { n, L, base, tails } = t;
  // Rounding slack only: a pair that crosses by more than this has no dominance order (→ DP).
  const tol = ORDER_SLACK * t.scale;
  for (let r = 0; r + 1 < n; r++) {
    const i = order[r];
    const j = order[r + 1];
    let gi = base[i];
    let gj = base[j];
    if (gi < gj - tol) return false;
    for (let k = 0; k < L; k++) {
      gi += tails[i * L + k];
      gj += tails[j * L + k];
      if (gi < gj - tol) return false;
    }
  }
  return true;
}
