import { pathIndices } from './forest.ts';
import { subtreeStats, type GroupStats } from './group-stats.ts';
import { broadcast } from './grpo.ts';
import type { AdvantageEstimator, Forest } from './types.ts';
import { tokenWhiten } from './whiten.ts';

export interface TreepoOptions {
  /** ε inside the whitening square root; verl's masked_whiten uses 1e-8. */
  epsilon?: number;
}

/**
 * TreePO's raw advantage of one leaf (its released tree-RLOO-style estimator with `average`
 * weighting): the mean over the leaf's ancestor groups g of (r − mean_g), no std division.
 * The prompt group always counts (a one-leaf prompt group has mean 0, so the term is r); a deeper group
 * counts only when it holds more than one rewarded leaf. Groups are distinct leaf sets: along a chain
 * of turns without branching every node holds the same leaves, and that set is counted once.
 */
export function treepoRaw(forest: Forest, stats: readonly GroupStats[], leaf: number): number {
  const r = forest.reward[leaf]!;
  const path = pathIndices(forest, leaf);
  const prompt = stats[forest.parent[path[0]]];
  let total = prompt.n === 1 ? r : r - prompt.mean;
  let groups = 1;
  let lastN = prompt.n;
  for (let k = 0; k < path.length - 1; k++) {
    const g = stats[path[k]];
    if (g.n > 1 && g.n !== lastN) {
      total += r - g.mean;
      groups++;
    }
    lastN = g.n;
  }
  return total / groups;
}

/**
 * `treepo` (TreePO, arXiv 2508.17445): raw advantages from {@link treepoRaw}, then whitened over every
 * generated token of the batch (token-weighted mean and unbiased variance, ε = 1e-8 inside the root).
 * The result is broadcast to every turn of the leaf.
 */
export function createTreepo(options: TreepoOptions = {}): AdvantageEstimator {
  const epsilon = options.epsilon ?? 1e-8;
  return {
    name: 'treepo',
    estimate(forest) {
      const stats = subtreeStats(forest);
      const leaves = forest.rewardedLeaves;
      const raw = leaves.map((leaf) => treepoRaw(forest, stats, leaf));
      const white = tokenWhiten(raw, leaves.map((leaf) => forest.length[leaf]), epsilon);
      return leaves.map((leaf, j) => broadcast(forest, leaf, white[j]));
    },
  };
}
