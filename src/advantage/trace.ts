import { pathIndices } from './forest.ts';
import { subtreeStats, zScore, type AdvantageScale, type GroupStats } from './group-stats.ts';
import type { AdvantageEstimator, Forest, LeafAdvantage } from './types.ts';

/**
 * How a turn below a branch point keeps a prompt-level comparison, so that its credit still says how
 * its prompt's group did and not only how its siblings did. Every form adds
 * nothing where the deepest anchor above the turn is the prompt itself (that comparison already is
 * the prompt's), so with no branch points below the prompts each form equals `grpo`.
 *  - `none`: the deepest anchor's comparison alone (estimator `trace-local`; a stored run made before
 *    `trace` had a prompt term names this rule `trace`, and train/config.ts reads it so).
 *  - `tree`: + z(V(r); G_prompt), r = the prompt's child on the turn's path (Tree-GRPO's tree value).
 *  - `node`: + z(V(c); G_prompt), the branch taken at the deepest anchor compared also with the whole
 *    prompt group (on a leaf's private turns V(c) is the leaf's reward, so there this is grpo's
 *    credit plus the sibling comparison; Tree-GRPO's released prompt-z + tree-z, per turn).
 *  - `ancestors`: the mean of the comparisons at every anchor above the turn, the prompt included
 *    (TreePO's ancestor average, per node and with each group's z).
 */
export type TracePromptTerm = 'none' | 'tree' | 'node' | 'ancestors';
export const TRACE_PROMPT_TERMS = ['none', 'tree', 'node', 'ancestors'] as const satisfies readonly TracePromptTerm[];

/** The form the `trace` estimator uses (chosen on the gradient bench, docs/advantages.md). */
export const DEFAULT_PROMPT_TERM: TracePromptTerm = 'tree';

export interface TraceOptions {
  /** ε in (V − mean) / (std + ε); 1e-6 like grpo so the two agree on unbranched trees. */
  epsilon?: number;
  /** Divide by the anchor group's std (`std`, default: the paper) or not (`none`, Dr. GRPO). */
  scale?: AdvantageScale;
  /** The prompt-level term ({@link TracePromptTerm}); default {@link DEFAULT_PROMPT_TERM}. */
  promptTerm?: TracePromptTerm;
}

/**
 * Per-turn advantages of the `trace` estimators, indexed by node; NaN for roots and for nodes with no
 * rewarded leaf below them.
 *
 * Anchors are the prompt root and every branch point: a node with at least two children that each hold
 * a rewarded leaf. For a turn u, a(u) is the deepest anchor that is a strict ancestor of u, and c(u) is
 * the child of a(u) on the way down to u (u itself when u hangs directly below the anchor). The local
 * comparison is
 *   L(u) = (V(c) − mean(G_a)) / (std(G_a) + ε),
 * where G_a holds the rewarded leaves below a, std is the sample std (N − 1), and V(c) is the mean reward
 * of the rewarded leaves below c (the subtree's value, as the predictor's targets define it). A one-leaf
 * prompt group reads as mean 0, std 1, as in grpo. `promptTerm` says what is added to L(u) when a(u)
 * is not the prompt ({@link TracePromptTerm}).
 */
export function traceTurnAdvantages(
  forest: Forest,
  epsilon = 1e-6,
  scale: AdvantageScale = 'std',
  promptTerm: TracePromptTerm = DEFAULT_PROMPT_TERM,
): Float64Array {
  const stats = subtreeStats(forest);
  const size = forest.ids.length;
  const anchor = new Int32Array(size).fill(-1);
  const branch = new Int32Array(size).fill(-1);
  const prompt = new Int32Array(size).fill(-1);
  const isAnchor = new Uint8Array(size);
  // For `ancestors`: the sum and count of the comparisons at every anchor above a node. Below a node
  // the anchors above only grow, and for an anchor above the parent the branch towards the node is
  // the same as towards the parent, so each node adds at most one term (its parent's, if an anchor).
  const sum = new Float64Array(size);
  const count = new Int32Array(size);
  const value = new Float64Array(size).fill(Number.NaN);
  const z = (x: number, group: number) => zScore(x, stats[group], epsilon, scale);
  for (const i of forest.order) {
    const p = forest.parent[i];
    if (p < 0) {
      isAnchor[i] = 1;
      prompt[i] = i;
      continue;
    }
    if (stats[i].n === 0) continue;
    isAnchor[i] = liveChildCount(forest, stats, i) >= 2 ? 1 : 0;
    anchor[i] = isAnchor[p] ? p : anchor[p];
    branch[i] = isAnchor[p] ? i : branch[p];
    prompt[i] = prompt[p];
    const local = z(stats[branch[i]].mean, anchor[i]);
    sum[i] = sum[p] + (isAnchor[p] ? z(stats[i].mean, p) : 0);
    count[i] = count[p] + isAnchor[p];
    const below = anchor[i] !== prompt[i];
    switch (promptTerm) {
      case 'none':
        value[i] = local;
        break;
      case 'tree':
        value[i] = below ? local + z(stats[treeOf(forest, i)].mean, prompt[i]) : local;
        break;
      case 'node':
        // V(u) = V(c(u)): no anchor lies between c and u, so both hold the same leaves.
        value[i] = below ? local + z(stats[branch[i]].mean, prompt[i]) : local;
        break;
      case 'ancestors':
        value[i] = sum[i] / count[i];
        break;
    }
  }
  return value;
}

/** The prompt's child on the way down to node i (its "tree" in Tree-GRPO's sense). */
function treeOf(forest: Forest, i: number): number {
  let t = i;
  while (forest.parent[forest.parent[t]] >= 0) t = forest.parent[t];
  return t;
}

function liveChildCount(forest: Forest, stats: readonly GroupStats[], i: number): number {
  let live = 0;
  for (const c of forest.children[i]) if (stats[c].n > 0) live++;
  return live;
}

/**
 * `trace` (project default): per-turn credit from the anchor groups that contain the turn
 * ({@link traceTurnAdvantages}), with the prompt term {@link DEFAULT_PROMPT_TERM} unless `promptTerm`
 * says otherwise (the other forms are library options for the gradient bench; they keep the name).
 * A leaf's scalar is its own turn's value. With no branch points below the prompts it equals `grpo`.
 */
export function createTrace(options: TraceOptions = {}): AdvantageEstimator {
  return traceEstimator('trace', options.promptTerm ?? DEFAULT_PROMPT_TERM, options);
}

/**
 * `trace-local`: each turn compared only at the deepest anchor above it (no prompt-level term): the
 * ablation of that term, and the rule older stored runs mean by `trace` (see train/config.ts).
 */
export function createTraceLocal(options: Omit<TraceOptions, 'promptTerm'> = {}): AdvantageEstimator {
  return traceEstimator('trace-local', 'none', options);
}

function traceEstimator(name: 'trace' | 'trace-local', promptTerm: TracePromptTerm, options: TraceOptions): AdvantageEstimator {
  const epsilon = options.epsilon ?? 1e-6;
  const scale = options.scale ?? 'std';
  return {
    name,
    estimate(forest) {
      const value = traceTurnAdvantages(forest, epsilon, scale, promptTerm);
      return forest.rewardedLeaves.map((leaf): LeafAdvantage => {
        const path = pathIndices(forest, leaf);
        return { id: forest.ids[leaf], advantage: value[leaf], path: path.map((i) => forest.ids[i]), turns: path.map((i) => value[i]) };
      });
    },
  };
}
