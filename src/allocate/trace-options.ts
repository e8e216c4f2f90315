import { MinHeap, mixedChance, mixedGain } from './solvers/index.ts';
import type { RootCandidate } from './types.ts';

/**
 * The value pieces of trace's named options beyond the paper (docs/allocation.md §4, "Beyond the
 * paper"). Pure functions, so tests can check them on hand-made cases.
 */

/**
 * `rootPrior: posterior`: the shared predictor's Ṽ as the mean of a Beta prior of strength κ,
 * updated with this prompt's observed bare outcomes: v = (κ·Ṽ + successes) / (κ + trials).
 * Unseen prompts keep Ṽ; a prompt seen often moves to its own success rate.
 */
export function posteriorRoot(c: RootCandidate, kappa: number): number {
  const s = c.history?.successes ?? 0;
  const n = c.history?.trials ?? 0;
  return (kappa * c.v + s) / (kappa + n);
}

/**
 * `rootValue: expansion-aware`: what each bare rollout adds through its N continuations, on top of
 * V_root. With chance d the rollout has an intermediate prefix; a continuation from a prefix of a
 * rollout with reward r repeats r with chance ρ = r·q + (1 − r)(1 − q); taking q ≈ v and r ~ Bern(v),
 * E[ρ] = v² + (1 − v)², so N continuations flip it with chance ≈ 1 − E[ρ]^N. The value per bare
 * rollout is b = d · (1 − (v² + (1 − v)²)^N) mixed anchors: zero for a prompt answered in one turn
 * (d = 0) or solved / failed for sure.
 */
export function expansionValue(v: number, d: number, N: number): number {
  const rho = v * v + (1 - v) * (1 - v);
  return d * (1 - rho ** N);
}

/**
 * `leftover: pool`: L extra bare rollouts over the whole pool, exactly maximising
 * Σ_i V_root(v_i, m_i + Δ_i) with Δ_i ≥ 0 for prompts that already have m_i ≥ m_min (no minimum), and
 * Δ_i ∈ {0} ∪ [m_min, m_max] for prompts without roots (a new prompt needs m_min outcomes to be worth
 * anything), m_i + Δ_i ≤ m_max, Σ Δ = L (or as much of L as fits). Method: for each count s of new
 * prompts, the s best new ones by V_root (with equal weights the closer v is to ½ the larger V_root is
 * at every m, so the best s form a prefix of that order) get m_min each, and the rest of L goes to the
 * largest marginal gains among the old prompts and the s new ones (concave sequences: greedy is exact
 * for fixed s). The best s wins; on ties the larger s (wider coverage, as the root solver's tie rule).
 * Returns Δ per candidate (input order).
 */
export function poolLeftover(v: readonly number[], m: readonly number[], L: number, mMin: number, mMax: number): number[] {
  const n = v.length;
  const fresh = Array.from({ length: n }, (_, i) => i).filter((i) => m[i] === 0);
  fresh.sort((a, b) => Math.abs(v[a] - 0.5) - Math.abs(v[b] - 0.5) || a - b);
  const old = Array.from({ length: n }, (_, i) => i).filter((i) => m[i] > 0 && m[i] < mMax);
  // Old prompts with a single rollout (not produced by trace, but allowed) gain from their 2nd one.
  let best: { value: number; delta: number[] } | null = null;
  const maxS = Math.min(fresh.length, Math.floor(L / mMin));
  for (let s = 0; s <= maxS; s++) {
    const delta = new Array<number>(n).fill(0);
    let value = 0;
    const heap = new MinHeap(n);
    for (let j = 0; j < s; j++) {
      const i = fresh[j];
      delta[i] = mMin;
      value += mixedChance(v[i], mMin);
      if (mMin < mMax) heap.push(i, -mixedGain(v[i], mMin + 1) + i * 1e-15);
    }
    for (const i of old) heap.push(i, -mixedGain(v[i], m[i] + 1) + i * 1e-15);
    for (let left = L - s * mMin; left > 0 && heap.size > 0; left--) {
      const i = heap.topItem();
      delta[i]++;
      const mi = m[i] + delta[i];
      value += mixedGain(v[i], mi);
      if (mi >= mMax) heap.pop();
      else heap.raiseTop(-mixedGain(v[i], mi + 1) + i * 1e-15);
    }
    if (!best || value >= best.value - 1e-12 * Math.max(1, Math.abs(value))) best = { value, delta };
  }
  return best?.delta ?? new Array<number>(n).fill(0);
}
