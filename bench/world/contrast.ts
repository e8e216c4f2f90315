/**
 * Contrast profile of a policy on an environment: where along a trajectory the outcome is still open.
 * Every prompt gets k bare rollouts; every intermediate prefix of those rollouts is continued k times
 * (the engine with a fixed allocation, one expansion round). At depth 0, V̂ is the success rate of the
 * k bare rollouts; at a prefix of depth d ≥ 1, of its k continuations only — the bare rollout that
 * passes through the prefix is left out because deeper prefixes of it were chosen after seeing it.
 * Each node contributes the unbiased estimate of V(1 − V) from k Bernoulli draws, s/k · (k − s)/(k − 1),
 * and the profile is the mean per depth: the learnable contrast a group at that depth can show.
 *
 * Used by bench/world/late.ts and test/env/world-late.test.ts.
 */
import type { Environment } from '../../src/env/types.ts';
import type { Policy } from '../../src/policy/types.ts';
import { runStep, type Allocator } from '../../src/rollout/index.ts';
import type { RolloutTree, TreeNode } from '../../src/tree/index.ts';
import type { Prompt } from '../../src/tree/types.ts';
import type { Rng } from '../../src/util/rng.ts';

export interface DepthContrast {
  depth: number;
  /** Nodes (roots or prefixes) measured at this depth. */
  nodes: number;
  /** Mean V̂ over those nodes. */
  meanV: number;
  /** Mean unbiased V(1 − V) over those nodes. */
  meanVar: number;
}

/** k roots per prompt and k continuations from every intermediate prefix of them. */
function everyPrefix(k: number): Allocator {
  return {
    cap: 1_000_000_000,
    roots: { plan: ({ candidates }) => new Map(candidates.map((c) => [c.promptId, k])) },
    prefixes: {
      continuationBudget: () => 1_000_000,
      plan: ({ prefixes }) => new Map(prefixes.map((p) => [p.id, k])),
    },
  };
}

/** The reward at the end of the single chain that starts at `id` (a continuation is not expanded again). */
function chainReward(tree: RolloutTree, id: string): number | undefined {
  let n: TreeNode = tree.nodes[id]!;
  while (n.children.length > 0) n = tree.nodes[n.children[0]!]!;
  return n.reward;
}

function unbiasedVar(rewards: number[]): number {
  const k = rewards.length;
  const s = rewards.reduce((a, b) => a + b, 0);
  return k < 2 ? 0 : ((s / k) * (k - s)) / (k - 1);
}

/** Per-depth contrast of `trees` built by {@link contrastTrees}. */
export function profileOf(trees: readonly RolloutTree[]): DepthContrast[] {
  const byDepth = new Map<number, { n: number; v: number; var: number }>();
  for (const tree of trees) {
    for (const node of Object.values(tree.nodes)) {
      const starts =
        node.parent === null
          ? node.children.filter((c) => tree.nodes[c]!.origin !== 'continuation')
          : node.children.filter((c) => tree.nodes[c]!.origin === 'continuation');
      if (starts.length < 2) continue;
      // A failed trajectory (no reward) counts as a failure, as it does in training.
      const rewards = starts.map((c) => chainReward(tree, c) ?? 0);
      const row = byDepth.get(node.depth) ?? { n: 0, v: 0, var: 0 };
      row.n++;
      row.v += rewards.reduce((a, b) => a + b, 0) / rewards.length;
      row.var += unbiasedVar(rewards);
      byDepth.set(node.depth, row);
    }
  }
  return [...byDepth.entries()].sort((a, b) => a[0] - b[0]).map(([depth, r]) => ({ depth, nodes: r.n, meanV: r.v / r.n, meanVar: r.var / r.n }));
}

export async function contrastTrees<S>(options: {
  env: Environment<S>;
  policy: Policy;
  prompts: readonly Prompt[];
  k: number;
  rng: Rng;
  maxTurns?: number;
}): Promise<RolloutTree[]> {
  const result = await runStep({
    prompts: options.prompts,
    env: options.env,
    policy: options.policy,
    rng: options.rng,
    strategy: everyPrefix(options.k),
    settings: { maxTurns: options.maxTurns ?? options.env.maxTurns },
  });
  return result.trees;
}

export async function contrastProfile<S>(options: Parameters<typeof contrastTrees<S>>[0]): Promise<DepthContrast[]> {
  return profileOf(await contrastTrees(options));
}

/**
 * The open variance along trajectories: for every bare rollout, V̂(1 − V̂) at its prefix of depth d,
 * 0 once the rollout has ended (its outcome is decided). By the law of total variance the depth-0 value
 * V(1 − V) splits into what each later decision resolves, so open[d] / open[0] is the share of the
 * outcome's variance that choices after turn d still decide; the per-node mean above conditions on
 * surviving to depth d and so cannot tell a decided short episode from an open long one.
 */
export function openProfile(trees: readonly RolloutTree[]): Array<{ depth: number; rollouts: number; open: number }> {
  const sums: number[] = [];
  let rollouts = 0;
  const varAt = (tree: RolloutTree, node: TreeNode): number | undefined => {
    const starts =
      node.parent === null
        ? node.children.filter((c) => tree.nodes[c]!.origin !== 'continuation')
        : node.children.filter((c) => tree.nodes[c]!.origin === 'continuation');
    return starts.length < 2 ? undefined : unbiasedVar(starts.map((c) => chainReward(tree, c) ?? 0));
  };
  let maxDepth = 0;
  for (const tree of trees) for (const n of Object.values(tree.nodes)) maxDepth = Math.max(maxDepth, n.depth);
  for (const tree of trees) {
    const root = Object.values(tree.nodes).find((n) => n.parent === null)!;
    for (const first of root.children.filter((c) => tree.nodes[c]!.origin !== 'continuation')) {
      rollouts++;
      let node: TreeNode | undefined = root;
      for (let d = 0; d <= maxDepth; d++) {
        // A node with children is open; a leaf (or past the end) has its outcome decided.
        const v = node && node.children.length > 0 ? (varAt(tree, node) ?? 0) : 0;
        sums[d] = (sums[d] ?? 0) + v;
        // Follow the bare rollout itself: its first child that is not a continuation.
        const next: string | undefined = node?.children.find((c) => tree.nodes[c]!.origin !== 'continuation');
        node = d === 0 ? tree.nodes[first] : next ? tree.nodes[next] : undefined;
      }
    }
  }
  return sums.map((s, depth) => ({ depth, rollouts, open: s / Math.max(1, rollouts) }));
}

/** Mean V(1 − V) over nodes at depths ≥ `from`, weighted by node count, divided by depth 0's. */
export function lateShare(profile: readonly DepthContrast[], from = 2): number {
  const root = profile.find((r) => r.depth === 0);
  const late = profile.filter((r) => r.depth >= from);
  const n = late.reduce((a, r) => a + r.nodes, 0);
  if (!root || root.meanVar === 0 || n === 0) return 0;
  return late.reduce((a, r) => a + r.meanVar * r.nodes, 0) / n / root.meanVar;
}
