/** Exhaustive oracles for the solvers: enumerate every allocation (small cases only). */
import { mixedChance } from '../../src/allocate/solvers/mixed-value.ts';
import { flipChance, repeatChance } from '../../src/allocate/solvers/prefix-solver.ts';

/** Best Σ w_i V_root(v_i, m_i) over m_i ∈ {0} ∪ [min, max] with Σ m_i = M; null when none exists. */
export function bruteWeighted(items: ReadonlyArray<{ v: number; w: number }>, M: number, min: number, max: number): number | null {
  const choices = [0];
  for (let m = min; m <= max; m++) choices.push(m);
  let best: number | null = null;
  const walk = (i: number, left: number, value: number) => {
    if (i === items.length) {
      if (left === 0 && (best === null || value > best)) best = value;
      return;
    }
    for (const m of choices) if (m <= left) walk(i + 1, left - m, value + items[i].w * mixedChance(items[i].v, m));
  };
  walk(0, M, 0);
  return best;
}

/**
 * The best value and, among allocations within 1e-9 (relative) of it, the most prompts selected: the
 * solvers' tie rule (the wider selection wins) must reach that count.
 */
export function bruteWidest(
  items: ReadonlyArray<{ v: number; w: number }>,
  M: number,
  min: number,
  max: number,
): { value: number; widest: number; narrowest: number } | null {
  const best = bruteWeighted(items, M, min, max);
  if (best === null) return null;
  const floor = best - 1e-9 * Math.max(1, Math.abs(best));
  let widest = -1;
  let narrowest = Infinity;
  const walk = (i: number, left: number, value: number, selected: number) => {
    if (i === items.length) {
      if (left === 0 && value >= floor) {
        widest = Math.max(widest, selected);
        narrowest = Math.min(narrowest, selected);
      }
      return;
    }
    walk(i + 1, left, value, selected);
    for (let m = min; m <= max && m <= left; m++) walk(i + 1, left - m, value + items[i].w * mixedChance(items[i].v, m), selected + 1);
  };
  walk(0, M, 0, 0);
  return { value: best, widest, narrowest };
}

/** Best Σ 1 − ρ_j^K_j over all K with Σ K = budget. */
export function brutePrefixes(prefixes: ReadonlyArray<{ q: number; r: number }>, budget: number): number {
  const rho = prefixes.map(({ q, r }) => repeatChance(q, r));
  let best = -Infinity;
  const walk = (i: number, left: number, value: number) => {
    if (i === rho.length - 1) {
      best = Math.max(best, value + flipChance(rho[i], left));
      return;
    }
    for (let K = 0; K <= left; K++) walk(i + 1, left - K, value + flipChance(rho[i], K));
  };
  walk(0, budget, 0);
  return best;
}

/** Best Σ w_j V_pref(K_j) over K_j ≥ 0 with Σ c_j K_j ≤ budget (the priced prefix problem). */
export function brutePricedPrefixes(prefixes: ReadonlyArray<{ q: number; r: number; w?: number; cost: number }>, budget: number): number {
  let best = 0;
  const walk = (i: number, left: number, value: number) => {
    if (i === prefixes.length) {
      best = Math.max(best, value);
      return;
    }
    const p = prefixes[i];
    for (let K = 0; K * p.cost <= left; K++) walk(i + 1, left - K * p.cost, value + (p.w ?? 1) * flipChance(repeatChance(p.q, p.r), K));
  };
  walk(0, budget, 0);
  return best;
}
