import { pathIndices } from './forest.ts';
import { subtreeStats, zScore, type AdvantageScale, type GroupStats } from './group-stats.ts';
import type { AdvantageEstimator, Forest, LeafAdvantage } from './types.ts';

export interface TraceOptions {
  /** ε in (V − mean) / (std + ε); 1e-6 like grpo so the two agree on unbranched trees. */
  epsilon?: number;
  /** Divide by the anchor group's std (`std`, default: the paper) or not (`none`, Dr. GRPO). */
  scale?: AdvantageScale;
}

/**
 * Per-turn advantages of the `trace` estimator, indexed by node; NaN for roots and for nodes with no
 * rewarded leaf below them.
 *
 * Anchors are the prompt root and every branch point: a node with at least two children that each hold
 * a rewarded leaf. For a turn u, a(u) is the deepest anchor that is a strict ancestor of u, and c(u) is
 * the child of a(u) on the way down to u (u itself when u hangs directly below the anchor). Then
 *   A(u) = (V(c) − mean(G_a)) / (std(G_a) + ε),
 * where G_a holds the rewarded leaves below a, std is the sample std (N − 1), and V(c) is the mean reward
 * of the rewarded leaves below c (the subtree's value, as the predictor's targets define it). Turns after
 * a branch point are compared with their siblings there; shared turns above it are compared at the
 * anchor above. A one-leaf prompt group reads as mean 0, std 1, as in grpo.
 */
export function traceTurnAdvantages(forest: Forest, epsilon = 1e-6, scale: AdvantageScale = 'std'): Float64Array {
  const stats = subtreeStats(forest);
  const size = forest.ids.length;
  const anchor = new Int32Array(size).fill(-1);
  const branch = new Int32Array(size).fill(-1);
  const isAnchor = new Uint8Array(size);
  const value = new Float64Array(size).fill(Number.NaN);
  for (const i of forest.order) {
    const p = forest.parent[i];
    if (p < 0) {
      isAnchor[i] = 1;
      continue;
    }
    if (stats[i].n === 0) continue;
    isAnchor[i] = liveChildCount(forest, stats, i) >= 2 ? 1 : 0;
    anchor[i] = isAnchor[p] ? p : anchor[p];
    branch[i] = isAnchor[p] ? i : branch[p];
    value[i] = zScore(stats[branch[i]].mean, stats[anchor[i]], epsilon, scale);
  }
  return value;
}

function liveChildCount(forest: Forest, stats: readonly GroupStats[], i: number): number {
  let live = 0;
  for (const c of forest.children[i]) if (stats[c].n > 0) live++;
  return live;
}

/**
 * `trace` (project default): per-turn credit from the deepest anchor group that contains the turn as a
 * branch ({@link traceTurnAdvantages}). A leaf's scalar is its own turn's value — its comparison at
 * the last branch point above it. With no branch points below the prompts it equals `grpo`.
 */
export function createTrace(options: TraceOptions = {}): AdvantageEstimator {
  const epsilon = options.epsilon ?? 1e-6;
  const scale = options.scale ?? 'std';
  return {
    name: 'trace',
    estimate(forest) {
      const value = traceTurnAdvantages(forest, epsilon, scale);
      return forest.rewardedLeaves.map((leaf): LeafAdvantage => {
        const path = pathIndices(forest, leaf);
        return { id: forest.ids[leaf], advantage: value[leaf], path: path.map((i) => forest.ids[i]), turns: path.map((i) => value[i]) };
      });
    },
  };
}
