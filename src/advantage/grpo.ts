import { pathIndices } from './forest.ts';
import { subtreeStats, zScore, type AdvantageScale } from './group-stats.ts';
import type { AdvantageEstimator, Forest, LeafAdvantage } from './types.ts';

export interface GrpoOptions {
  /** ε in z = (r − mean) / (std + ε); verl's default 1e-6. */
  epsilon?: number;
  /** Divide by the group std (`std`, default) or not (`none`, Dr. GRPO). */
  scale?: AdvantageScale;
}

/** Root of node `i`: the prompt it belongs to. */
export function rootOf(forest: Forest, i: number): number {
  while (forest.parent[i] >= 0) i = forest.parent[i];
  return i;
}

/** A leaf record whose every turn carries the leaf's scalar (outcome-only credit). */
export function broadcast(forest: Forest, leaf: number, advantage: number): LeafAdvantage {
  const path = pathIndices(forest, leaf);
  return { id: forest.ids[leaf], advantage, path: path.map((i) => forest.ids[i]), turns: path.map(() => advantage) };
}

/**
 * `grpo` (baseline): the prompt's rewarded leaves form one group; A = (r − mean) / (std + ε) with the
 * sample std (N − 1), ε = 1e-6, and a one-leaf group read as mean 0, std 1 — verl's
 * compute_grpo_outcome_advantage. The scalar is broadcast to every turn of the leaf.
 */
export function createGrpo(options: GrpoOptions = {}): AdvantageEstimator {
  const epsilon = options.epsilon ?? 1e-6;
  const scale = options.scale ?? 'std';
  return {
    name: 'grpo',
    estimate(forest) {
      const stats = subtreeStats(forest);
      return forest.rewardedLeaves.map((leaf) => broadcast(forest, leaf, zScore(forest.reward[leaf]!, stats[rootOf(forest, leaf)], epsilon, scale)));
    },
  };
}
