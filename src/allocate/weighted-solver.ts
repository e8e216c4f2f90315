import { AllocationInputError, InfeasibleBudgetError } from './errors.ts';
import { isSpendable, selectableCounts, spendableAbove, spendableBelow, type Bounds } from './feasibility.ts';
import { MinHeap } from './min-heap.ts';
import { mixedChance, mixedGain } from './mixed-value.ts';

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
 *     marginal gains among them (exact: concave). A sweep over s keeps those top-R gains in two
 *     indexed heaps; as s grows R shrinks and gains are added, so the R-th largest gain only rises and
 *     each gain enters and leaves the chosen set at most once: O(n (m_max − m_min) log n).
 *  2. Otherwise (weighted prompts whose curves cross) an exact dynamic programme over prompts and
 *     budget, O(n · M · (m_max − m_min)).
 *
 * Ties are broken deterministically: among equal prompts the lower index is selected first and gets
 * extra units first. Values equal within 1e-9 (relative) count as ties.
 */
export interface WeightedItem {
  v: number;
  w: number;
}

export interface SolveOptions extends Bounds {
  budget: number;
  /** Force a method (tests); default 'auto' = sweep when a dominance order exists, else dp. */
  method?: 'auto' | 'sweep' | 'dp';
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
const TIE = 1e-9;
// The DP compares n times along a path, so its tie margin is tighter than the sweep's.
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
  if (method === 'sweep' && !order) throw new AllocationInputError('method', 'no dominance order exists for these prompts; use "dp" or "auto"');
  let m: Int32Array;
  if (order) m = sweep(table, order, M);
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
  if (!Number.isInteger(o.max) || o.max < o.min) throw new AllocationInputError('max', `m_max must be an integer ≥ min (${o.min}), got ${o.max}`);
  items.forEach(({ v, w }, i) => {
    if (!(v >= 0 && v <= 1)) throw new AllocationInputError(`${vf}[${i}]`, `must be a probability in [0, 1], got ${v}`);
    if (!(w >= 0 && Number.isFinite(w))) throw new AllocationInputError(`${vf}[${i}]`, `weight must be finite and ≥ 0, got ${w}`);
  });
}

/** Per prompt: base g(m_min) and the L = m_max − m_min marginal gains after it (non-increasing). */
interface Table {
  n: number;
  min: number;
  L: number;
  base: Float64Array;
  /** tails[i·L + k] = g_i(m_min + k + 1) − g_i(m_min + k). */
  tails: Float64Array;
  scale: number;
}

function buildTable(items: readonly WeightedItem[], min: number, max: number): Table {
  const n = items.length;
  const L = max - min;
  const base = new Float64Array(n);
  const tails = new Float64Array(n * L);
  let scale = 0;
  for (let i = 0; i < n; i++) {
    const { v, w } = items[i];
    scale = Math.max(scale, w);
    base[i] = w * mixedChance(v, min);
    const u = v <= 0.5 ? v : 1 - v;
    // Marginal gain of unit m: u^(m−1)(1 − u) + (1 − u)^(m−1) u, powers updated by multiplication.
    let pu = u ** min;
    let pq = (1 - u) ** min;
    let prev = w * mixedGain(v, min);
    for (let k = 0; k < L; k++) {
      const g = Math.min(prev, w * (pu * (1 - u) + pq * u));
      tails[i * L + k] = g;
      prev = g;
      pu *= u;
      pq *= 1 - u;
    }
  }
  return { n, min, L, base, tails, scale: Math.max(scale, 1e-300) };
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
  const tol = TIE * t.scale;
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

/**
 * Step 1: best prefix size s by a sweep, then the exact allocation for it. Returns m in input order.
 *
 * State for the current s: e[r] = marginal gains taken by the prompt at position r (always its first
 * e[r] gains, as they are non-increasing), their sum, and a min-heap of each prompt's smallest taken
 * gain. Going from s to s + 1 adds prompt s and lowers R by m_min. Every gain not taken so far is ≤ λ,
 * the smallest taken gain, and λ only rises, so a gain given back is never needed again: adding prompt
 * s means taking all its gains > λ at once (binary search), then giving back the smallest taken gains
 * until exactly R remain. Each gain is taken and given back at most once.
 */
function sweep(t: Table, order: Int32Array, M: number): Int32Array {
  const { n, min, L, base, tails } = t;
  const { lo, hi } = selectableCounts(n, M, { min, max: min + L });
  const e = new Int32Array(n);
  const taken = new MinHeap(n);
  let takenSum = 0;
  let takenCount = 0;
  let baseSum = 0;
  const add = (r: number, lambda: number) => {
    const off = order[r] * L;
    baseSum += base[order[r]];
    let k = 0;
    let sum = 0;
    while (k < L && tails[off + k] > lambda) sum += tails[off + k++];
    if (k === 0) return;
    e[r] = k;
    takenSum += sum;
    takenCount += k;
    taken.push(r, tails[off + k - 1]);
  };
  const trimTo = (R: number) => {
    while (takenCount > R) {
      const r = taken.topItem();
      const off = order[r] * L;
      takenSum -= tails[off + --e[r]];
      takenCount--;
      if (e[r] > 0) taken.raiseTop(tails[off + e[r] - 1]);
      else taken.pop();
    }
  };
  for (let r = 0; r < lo; r++) add(r, -Infinity);
  let R = M - lo * min;
  trimTo(R);
  const lambdaNow = () => (taken.size > 0 ? taken.topKey() : Infinity);
  let best = baseSum + takenSum;
  let bestS = lo;
  let bestLambda = lambdaNow();
  for (let s = lo + 1; s <= hi; s++) {
    add(s - 1, lambdaNow());
    R -= min;
    trimTo(R);
    const value = baseSum + takenSum;
    if (value > best + TIE * Math.max(1, Math.abs(best))) {
      best = value;
      bestS = s;
      bestLambda = lambdaNow();
    }
  }
  const selected = Array.from(order.subarray(0, bestS)).sort((a, b) => a - b);
  return fillSelected(t, selected, M - bestS * min, bestLambda);
}

/**
 * Each selected prompt gets m_min plus its gains > λ (λ = the R-th largest gain among them); the
 * units left go to gains equal to λ, lower index first.
 */
function fillSelected(t: Table, selected: readonly number[], R: number, lambda: number): Int32Array {
  const { n, min, L, tails } = t;
  const m = new Int32Array(n);
  let left = R;
  for (const i of selected) {
    let k = 0;
    while (k < L && tails[i * L + k] > lambda) k++;
    m[i] = min + k;
    left -= k;
  }
  for (const i of selected) {
    while (left > 0 && m[i] - min < L && tails[i * L + m[i] - min] === lambda) {
      m[i]++;
      left--;
    }
  }
  if (left !== 0) throw new Error(`internal: ${left} units left after filling at λ = ${lambda}`);
  return m;
}

/** Step 2: exact DP. best[x] = max value of the prompts so far using exactly x units. */
function dynamicProgramme(t: Table, M: number): Int32Array {
  const { n, min, L, base, tails } = t;
  const max = min + L;
  let best = new Float64Array(M + 1).fill(-Infinity);
  best[0] = 0;
  const choice = new Uint16Array(n * (M + 1));
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
        // Strictly better only: on ties the earlier choice (fewer units for this prompt) stays.
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
