import { MinHeap, mixedGain } from '../solvers/index.ts';
import type { LeftoverInput, LeftoverPlanner, RootCandidate } from '../types.ts';
import { poolLeftover } from '../trace-options.ts';

/**
 * What a tree strategy does with continuation budget it could not place: a prompt whose bare rollouts
 * all ended after one turn has no intermediate prefix, so its m_i · N continuations would go unspent
 * and the strategy would run cheaper than its rivals. Once every prompt's expansion is planned, the
 * remaining L trajectories become extra bare rollouts of prompts that already have m_i ≥ 2 (the
 * TRACE-SPEC leaves this open; docs/allocation.md records the choice).
 *
 * `adaptiveTopUp` maximises Σ V_root(v_i, m_i + Δ_i) subject to Σ Δ_i = L, m_i + Δ_i ≤ m_max. For m ≥ 2
 * the marginal gain v^m(1 − v) + (1 − v)^m v decreases in m, so greedy by marginal gain is exact.
 * `uniformTopUp` gives each extra rollout to the prompt with the fewest (the uniform baselines' rule).
 */
export function adaptiveTopUp(v: readonly number[], m: readonly number[], L: number, mMax: number): number[] {
  return topUp(m, L, mMax, (i, mi) => -mixedGain(v[i], mi + 1));
}

export function uniformTopUp(m: readonly number[], L: number, mMax: number): number[] {
  return topUp(m, L, mMax, (_, mi) => mi);
}

/** Greedy: repeatedly give one rollout to the prompt with the smallest key (ties: lower index). */
function topUp(m: readonly number[], L: number, mMax: number, key: (i: number, mi: number) => number): number[] {
  const delta = m.map(() => 0);
  const heap = new MinHeap(m.length);
  // Index as a tiny tie-breaker keeps the choice deterministic and independent of heap internals.
  const k = (i: number, mi: number) => key(i, mi) + i * 1e-15;
  m.forEach((mi, i) => {
    if (mi >= 2 && mi < mMax) heap.push(i, k(i, mi));
  });
  for (let left = L; left > 0 && heap.size > 0; left--) {
    const i = heap.topItem();
    delta[i]++;
    const mi = m[i] + delta[i];
    if (mi >= mMax) heap.pop();
    else heap.raiseTop(k(i, mi));
  }
  return delta;
}

/** Leftover budget as extra bare rollouts by marginal V_root gain on `value` (greedy, exact; m ≤ m_max). */
export function adaptiveLeftover(value: (c: RootCandidate) => number, mMax: number): LeftoverPlanner {
  return { plan: (input) => leftoverPlan(input, (m) => adaptiveTopUp(input.candidates.map(value), m, input.remaining, mMax)) };
}

/** trace's `leftover: pool`: the leftover as a root problem over the whole pool (`poolLeftover`, exact). */
export function poolLeftoverPlanner(value: (c: RootCandidate) => number, mMin: number, mMax: number): LeftoverPlanner {
  return { plan: (input) => leftoverPlan(input, (m) => poolLeftover(input.candidates.map(value), m, input.remaining, mMin, mMax)) };
}

/** Leftover budget as extra bare rollouts, each to the prompt with the fewest (the uniform baselines' rule). */
export function uniformLeftover(mMax: number): LeftoverPlanner {
  return { plan: (input) => leftoverPlan(input, (m) => uniformTopUp(m, input.remaining, mMax)) };
}

function leftoverPlan(input: LeftoverInput, topUpOf: (m: number[]) => number[]): Map<string, number> {
  const cs = input.candidates;
  const delta = topUpOf(cs.map((c) => input.roots.get(c.promptId) ?? 0));
  return new Map(cs.flatMap((c, i) => (delta[i] > 0 ? [[c.promptId, delta[i]] as [string, number]] : [])));
}
