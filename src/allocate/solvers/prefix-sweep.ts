import { selectableCounts } from './feasibility.ts';
import { MinHeap } from './min-heap.ts';
import { TIE, type Table } from './value-table.ts';

/**
 * Step 1 of the weighted solver: prompts in dominance order (each dominates the next at every m), so
 * some optimum selects a prefix of s prompts. For a prefix of s prompts,
 *   V(s) = Σ_{i<s} g_i(m_min) + (sum of the R_s largest marginal gains among them),  R_s = M − s·m_min,
 * and the answer is the best feasible s (the largest among those within TIE of the best value: on
 * ties the wider selection wins, so a cold start with every v = ½ spreads M as m_min per prompt). Evaluating every s from ⌈M/m_max⌉ to
 * ⌊M/m_min⌋ by a sweep is exact but moves each gain in and out of the chosen set once (hundreds of
 * thousands of heap operations at 10,000 prompts), so the sweep is limited to the s that can still win:
 *
 *   Lagrangian upper bound, for any λ ≥ 0 (LP duality of "pick the R largest"):
 *     V(s) ≤ U_λ(s) = λ·R_s + Σ_{i<s} ψ_i(λ),   ψ_i(λ) = g_i(m_min) + Σ_k max(0, gain_ik − λ),
 *   with equality at λ = the R_s-th largest gain. Every U_λ(s) costs O(log L) per prompt, for all s.
 *
 * 1. A Lagrangian guess s̃ (λ̂ where the prompts' best responses spend M) and its exact V(s̃) (quickselect).
 * 2. U(s) = min over a few λ around V(s̃)'s threshold; every s with U(s) < V(s̃) − tol is proven worse.
 * 3. The exact sweep over the window [first, last] of the remaining s (which contains s̃).
 */
export function solveBySweep(t: Table, order: Int32Array, M: number, options: { prune?: boolean } = {}): Int32Array {
  const { n, min, L } = t;
  const { lo, hi } = selectableCounts(n, M, { min, max: min + L });
  let from = lo;
  let to = hi;
  let known: { value: number; lambda: number } | undefined;
  if ((options.prune ?? true) && hi - lo > 64 && L > 0) {
    const lagrange = lagrangianGuess(t, order, M);
    const guess = Math.min(hi, Math.max(lo, lagrange.count));
    const incumbent = evaluatePrefix(t, order, guess, M - guess * min, lagrange.lambda / 2);
    const bound = upperBounds(t, order, M, lo, hi, incumbent.lambda);
    const floor = incumbent.value - TIE * Math.max(1, Math.abs(incumbent.value));
    from = guess;
    to = guess;
    for (let s = lo; s <= hi; s++) {
      if (bound[s - lo] >= floor) {
        from = Math.min(from, s);
        to = Math.max(to, s);
      }
    }
    if (from === guess) known = incumbent;
  }
  const best = sweepWindow(t, order, M, from, to, known);
  const selected = Array.from(order.subarray(0, best.s)).sort((a, b) => a - b);
  return fillSelected(t, selected, M - best.s * min, best.lambda);
}

/** Number of gains of prompt i (row offset off) strictly above λ: binary search on the non-increasing row. */
function countAbove(tails: Float64Array, off: number, L: number, lambda: number): number {
  let a = 0;
  let b = L;
  while (a < b) {
    const c = (a + b) >> 1;
    if (tails[off + c] > lambda) a = c + 1;
    else b = c;
  }
  return a;
}

/**
 * The Lagrangian's guess: bisect λ (geometrically, to 0.1 %) until the prompts with positive net surplus
 * max_m g_i(m) − λm, each taking its best response m_min + e_i(λ), demand about M units. Returns the
 * number of such prompts and λ. Only a guess: exactness comes from the bounds and the sweep.
 */
export function lagrangianGuess(t: Table, order: Int32Array, M: number): { count: number; lambda: number } {
  let hiL = 0;
  for (let i = 0; i < t.n; i++) hiL = Math.max(hiL, t.base[i] / t.min);
  if (!(hiL > 0)) return { count: 0, lambda: 0 };
  let loL = hiL * 1e-30;
  let count = 0;
  while (hiL > loL * 1.001) {
    const lambda = Math.sqrt(loL * hiL);
    let demand = 0;
    count = 0;
    for (let r = 0; r < t.n; r++) {
      // Net surplus at price λ: max over m ∈ [m_min, m_max] of g_i(m) − λm, attained at m_min + e.
      const off = order[r] * t.L;
      const e = countAbove(t.tails, off, t.L, lambda);
      if (t.base[order[r]] + (e > 0 ? t.cum[off + e - 1] : 0) - lambda * (t.min + e) > 0) {
        demand += t.min + e;
        count++;
      }
    }
    if (demand > M) loL = lambda;
    else hiL = lambda;
  }
  return { count, lambda: hiL };
}

/** Multiples of the incumbent's threshold at which the upper bounds are taken. */
const GRID = [0.5, 0.8, 1, 1.25, 2];

/** U(s) = min over a λ grid of λ·R_s + Σ_{i<s} ψ_i(λ), for s in [lo, hi]. */
function upperBounds(t: Table, order: Int32Array, M: number, lo: number, hi: number, center: number): Float64Array {
  const bound = new Float64Array(hi - lo + 1).fill(Infinity);
  const lambdas: number[] = [];
  if (Number.isFinite(center) && center > 0) for (const f of GRID) lambdas.push(center * f);
  else lambdas.push(0);
  for (const lambda of lambdas) {
    let sum = 0;
    for (let s = 1; s <= hi; s++) {
      const i = order[s - 1];
      const off = i * t.L;
      const e = countAbove(t.tails, off, t.L, lambda);
      sum += t.base[i] + (e > 0 ? t.cum[off + e - 1] : 0) - lambda * e;
      if (s >= lo) {
        const u = sum + lambda * (M - s * t.min);
        if (u < bound[s - lo]) bound[s - lo] = u;
      }
    }
  }
  return bound;
}

/**
 * Exact V(s) and its threshold λ (the R-th largest gain; +∞ when R = 0), by quickselect. With a `floor`
 * hint, only gains above it are gathered when at least R of them exist (the R largest are among them).
 */
function evaluatePrefix(t: Table, order: Int32Array, s: number, R: number, floor = -Infinity): { value: number; lambda: number } {
  const { L, tails } = t;
  let baseSum = 0;
  for (let r = 0; r < s; r++) baseSum += t.base[order[r]];
  if (R === 0) return { value: baseSum, lambda: Infinity };
  let size = 0;
  for (let r = 0; r < s; r++) size += countAbove(tails, order[r] * L, L, floor);
  if (size < R) {
    floor = -Infinity;
    size = s * L;
  }
  const pool = new Float64Array(size);
  let at = 0;
  for (let r = 0; r < s; r++) {
    const off = order[r] * L;
    for (let k = 0; k < L && tails[off + k] > floor; k++) pool[at++] = tails[off + k];
  }
  const lambda = kthLargest(pool, R);
  let above = 0;
  let count = 0;
  for (let k = 0; k < pool.length; k++) {
    if (pool[k] > lambda) {
      above += pool[k];
      count++;
    }
  }
  return { value: baseSum + above + (R - count) * lambda, lambda };
}

/** The k-th largest value (1-based) of xs; reorders xs. Hoare-style quickselect, middle pivot. */
function kthLargest(xs: Float64Array, k: number): number {
  let a = 0;
  let b = xs.length - 1;
  const target = k - 1;
  while (a < b) {
    const pivot = xs[(a + b) >> 1];
    let i = a;
    let j = b;
    while (i <= j) {
      while (xs[i] > pivot) i++;
      while (xs[j] < pivot) j--;
      if (i <= j) {
        const tmp = xs[i];
        xs[i] = xs[j];
        xs[j] = tmp;
        i++;
        j--;
      }
    }
    if (target <= j) b = j;
    else if (target >= i) a = i;
    else return xs[target];
  }
  return xs[target];
}

/**
 * The exact sweep over s = from … to. State: e[r] = gains taken by the prompt at position r (its first
 * e[r]), their sum, and a min-heap of each prompt's smallest taken gain. Every gain not taken is ≤ λ,
 * the smallest taken gain, and λ only rises with s (R shrinks, gains are added), so a gain given back is
 * never needed again: adding a prompt takes all its gains > λ at once, then the smallest taken gains
 * are given back until exactly R remain.
 */
function sweepWindow(
  t: Table,
  order: Int32Array,
  M: number,
  from: number,
  to: number,
  known?: { value: number; lambda: number },
): { s: number; lambda: number } {
  const { n, min, L, base, tails } = t;
  const e = new Int32Array(n);
  const taken = new MinHeap(n);
  let takenSum = 0;
  let takenCount = 0;
  let baseSum = 0;
  let R = M - from * min;
  // Start at s = from with its exact top-R set: every gain above the threshold, then ties.
  const start = known ?? evaluatePrefix(t, order, from, R);
  let ties = R;
  for (let r = 0; r < from; r++) {
    const off = order[r] * L;
    baseSum += base[order[r]];
    e[r] = countAbove(tails, off, L, start.lambda);
    ties -= e[r];
  }
  for (let r = 0; r < from && ties > 0; r++) {
    const off = order[r] * L;
    while (ties > 0 && e[r] < L && tails[off + e[r]] === start.lambda) {
      e[r]++;
      ties--;
    }
  }
  for (let r = 0; r < from; r++) {
    if (e[r] === 0) continue;
    const off = order[r] * L;
    takenSum += t.cum[off + e[r] - 1];
    takenCount += e[r];
    taken.push(r, tails[off + e[r] - 1]);
  }
  // V(s) and its threshold for every s of the window; the pick comes after the sweep because a tie
  // is judged against the best value over the whole window (the largest s within TIE of it wins).
  const values = new Float64Array(to - from + 1);
  const lambdas = new Float64Array(to - from + 1);
  values[0] = baseSum + takenSum;
  lambdas[0] = taken.size > 0 ? taken.topKey() : Infinity;
  for (let s = from + 1; s <= to; s++) {
    const r = s - 1;
    const off = order[r] * L;
    const lambda = taken.size === 0 ? Infinity : taken.topKey();
    baseSum += base[order[r]];
    let k = 0;
    while (k < L && tails[off + k] > lambda) takenSum += tails[off + k++];
    if (k > 0) {
      e[r] = k;
      takenCount += k;
      taken.push(r, tails[off + k - 1]);
    }
    R -= min;
    while (takenCount > R) {
      const q = taken.topItem();
      const qo = order[q] * L;
      const left = --e[q];
      takenSum -= tails[qo + left];
      takenCount--;
      if (left > 0) taken.raiseTop(tails[qo + left - 1]);
      else taken.pop();
    }
    values[s - from] = baseSum + takenSum;
    lambdas[s - from] = taken.size > 0 ? taken.topKey() : Infinity;
  }
  let best = -Infinity;
  for (const v of values) best = Math.max(best, v);
  const floor = best - TIE * Math.max(1, Math.abs(best));
  let bestS = to;
  while (values[bestS - from] < floor) bestS--;
  const bestLambda = lambdas[bestS - from];
  return { s: bestS, lambda: bestLambda };
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
    const k = countAbove(tails, i * L, L, lambda);
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
