import type { Forest } from './types.ts';

/**
 * Statistics of a group: the rewarded leaves below one node. `n` leaves, their mean reward and
 * M2 = Σ (r − mean)², merged bottom-up with Chan et al.'s pairwise update so a uniform shift of the
 * rewards (say +1000) changes neither the deviations nor the spread beyond rounding.
 */
export interface GroupStats {
  n: number;
  mean: number;
  m2: number;
}

const EMPTY: GroupStats = { n: 0, mean: 0, m2: 0 };

function merge(a: GroupStats, b: GroupStats): GroupStats {
  if (a.n === 0) return b;
  if (b.n === 0) return a;
  const n = a.n + b.n;
  const delta = b.mean - a.mean;
  return { n, mean: a.mean + (delta * b.n) / n, m2: a.m2 + b.m2 + (delta * delta * a.n * b.n) / n };
}

/** Group statistics for every node of the forest (a leaf's group is itself, if rewarded). */
export function subtreeStats(forest: Forest): GroupStats[] {
  const stats: GroupStats[] = forest.ids.map(() => EMPTY);
  for (let k = forest.order.length - 1; k >= 0; k--) {
    const i = forest.order[k];
    const r = forest.reward[i];
    let s: GroupStats = r === undefined ? EMPTY : { n: 1, mean: r, m2: 0 };
    for (const c of forest.children[i]) s = merge(s, stats[c]);
    stats[i] = s;
  }
  return stats;
}

/** Sample standard deviation √(M2 / (n − 1)) — torch.std's default, which verl's GRPO uses. */
export function sampleStd(g: GroupStats): number {
  return g.n > 1 ? Math.sqrt(g.m2 / (g.n - 1)) : 0;
}

/**
 * Normalisation parameters of a group with verl's GRPO conventions: mean and sample std, except that a
 * one-leaf group has mean 0 and std 1 (so its leaf's z equals its reward).
 */
export function grpoMoments(g: GroupStats): { mean: number; std: number } {
  return g.n === 1 ? { mean: 0, std: 1 } : { mean: g.mean, std: sampleStd(g) };
}

/**
 * How a group's deviations are scaled: `std` divides by the group's sample std (GRPO); `none` keeps
 * them as they are (Dr. GRPO, Liu et al. 2025), so a rare outcome in a lopsided or large group
 * (1 failure among 6 leaves: −2.04 with std, −0.83 without) does not dominate the update.
 */
export type AdvantageScale = 'std' | 'none';
export const ADVANTAGE_SCALES = ['std', 'none'] as const satisfies readonly AdvantageScale[];

/** z = (x − mean) / (std + ε) for a group under GRPO conventions; with scale `none`, x − mean. */
export function zScore(x: number, g: GroupStats, epsilon: number, scale: AdvantageScale = 'std'): number {
  const { mean, std } = grpoMoments(g);
  return scale === 'none' ? x - mean : (x - mean) / (std + epsilon);
}
