import { pathIndices } from './forest.ts';
import { subtreeStats, type GroupStats } from './group-stats.ts';
import { broadcast } from './grpo.ts';
import type { AdvantageEstimator, Forest } from './types.ts';
import { tokenWhiten } from './whiten.ts';

export interface TreepoOptions {
  /** ε inside the whitening square root; verl's masked_whiten uses 1e-8. */
  epsilon?: number;
  /**
   * Which ancestor groups a leaf averages over. 'per-depth' (default, TreePO's released rule): one
   * term per depth whose group holds more than one leaf, so a group that spans a stretch of turns
   * without branching counts once per turn. 'distinct': each distinct leaf set once (docs/advantages.md).
   */
  groups?: 'per-depth' | 'distinct';
}

/**
 * TreePO's raw advantage of one leaf (`compute_tree_reinforce_plus_plus_baseline_outcome_advantage`
 * with `adv_weight_strategy="average"`, turns as its segments): the mean over depths d = 0 … of
 * (r − mean of the leaves sharing the leaf's path prefix of length d), no std division. Depth 0 (the
 * prompt) always counts (a one-leaf prompt group has mean 0, so the term is r); a deeper depth counts
 * only when its group holds more than one rewarded leaf. The leaf's own node is never a group.
 */
export function treepoRaw(forest: Forest, stats: readonly GroupStats[], leaf: number, groups: TreepoOptions['groups'] = 'per-depth'): number {
  const r = forest.reward[leaf]!;
  const path = pathIndices(forest, leaf);
  const prompt = stats[forest.parent[path[0]]];
  let total = prompt.n === 1 ? r : r - prompt.mean;
  let count = 1;
  let lastN = prompt.n;
  for (let k = 0; k < path.length - 1; k++) {
    const g = stats[path[k]];
    // Below a node, the leaf set can only shrink: an equal count is the same set as the node above.
    const repeated = groups === 'distinct' && g.n === lastN;
    if (g.n > 1 && !repeated) {
      total += r - g.mean;
      count++;
    }
    lastN = g.n;
  }
  return total / count;
}

/**
 * `treepo` (TreePO, arXiv 2508.17445): raw advantages from {@link treepoRaw}, then whitened over every
 * generated token of the batch (token-weighted mean and unbiased variance, ε = 1e-8 inside the root).
 * The result is broadcast to every turn of the leaf.
 */
export function createTreepo(options: TreepoOptions = {}): AdvantageEstimator {
  const epsilon = options.epsilon ?? 1e-8;
  const groups = options.groups ?? 'per-depth';
  return {
    name: 'treepo',
    estimate(forest) {
      const stats = subtreeStats(forest);
      const leaves = forest.rewardedLeaves;
      const raw = leaves.map((leaf) => treepoRaw(forest, stats, leaf, groups));
      const white = tokenWhiten(
        raw,
        leaves.map((leaf) => forest.length[leaf]),
        epsilon,
      );
      return leaves.map((leaf, j) => broadcast(forest, leaf, white[j]));
    },
  };
}
