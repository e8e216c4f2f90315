import { pathIndices } from './forest.ts';
import { subtreeStats, zScore, type AdvantageScale } from './group-stats.ts';
import { broadcast } from './grpo.ts';
import type { AdvantageEstimator } from './types.ts';

export interface TreeGrpoOptions {
  /** ε in each z; 1e-6 as in verl's GRPO. */
  epsilon?: number;
  /** Divide each term by its group's std (`std`, default) or not (`none`, Dr. GRPO). */
  scale?: AdvantageScale;
}

/**
 * `tree-grpo` (Tree-GRPO, arXiv 2509.21240): A = z over the prompt's leaves + z over the leaf's tree,
 * where a tree is one child subtree of the prompt root (a bare rollout plus every continuation branched
 * from it). Both z use GRPO's conventions (sample std, ε, a one-leaf group has mean 0 and std 1, so an
 * unexpanded rollout's tree term is its reward). Broadcast to every turn.
 */
export function createTreeGrpo(options: TreeGrpoOptions = {}): AdvantageEstimator {
  const epsilon = options.epsilon ?? 1e-6;
  const scale = options.scale ?? 'std';
  return {
    name: 'tree-grpo',
    estimate(forest) {
      const stats = subtreeStats(forest);
      return forest.rewardedLeaves.map((leaf) => {
        const path = pathIndices(forest, leaf);
        const tree = path[0];
        const prompt = forest.parent[tree];
        const r = forest.reward[leaf]!;
        return broadcast(forest, leaf, zScore(r, stats[prompt], epsilon, scale) + zScore(r, stats[tree], epsilon, scale));
      });
    },
  };
}
