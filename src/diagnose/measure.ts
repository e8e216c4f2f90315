import type { RolloutTree, TreeNode } from '../tree/index.ts';
import { getNode, root } from '../tree/index.ts';

/**
 * One sampled outcome group: the k trajectories started from one prefix (the root's k rollouts at
 * depth 0, a prefix's k continuations at depth t ≥ 1), as the measure sees them.
 */
export interface PrefixSample {
  depth: number;
  /** Terminal rewards in {0, 1} of the trajectories that finished (failed ones carry none). */
  outcomes: number[];
  /** Policy entropy (nats) of each trajectory's first decision, where the policy reported one. */
  entropies: number[];
  /** Per trajectory started here: turns it generated (policy calls) and tokens it generated. */
  costs: Array<{ turns: number; tokens: number }>;
  /** True V at this prefix, where the environment knows it (the simulator). */
  truth?: number;
}

/** What one depth t of the diagnosis reports (see depthRows). */
export interface DepthRow {
  depth: number;
  /** Prefixes at depth t with at least two finished trajectories (the root counts once per prompt at t = 0). */
  prefixes: number;
  /** Expanded bare rollouts that had already ended at or before depth t: their outcome is known, V_t(1 − V_t) = 0. */
  ended: number;
  /** Mean V̂_t over the prefixes. */
  meanV: number | null;
  /** Mean of k/(k − 1) · V̂_t(1 − V̂_t) over the prefixes: unbiased for each prefix's V_t(1 − V_t). */
  contrast: number | null;
  /** Mean of the plug-in V̂_t(1 − V̂_t) (biased low by the factor (k − 1)/k). */
  contrastPlugIn: number | null;
  /** Mean true V_t(1 − V_t), where the environment knows V (the simulator). */
  trueContrast?: number | null;
  /**
   * E[V_t(1 − V_t)] over every bare rollout (ended ones count 0) divided by E[V_0(1 − V_0)]: the share
   * of the outcome variance still open after t turns (1 at t = 0; null when nothing is open at the root).
   */
  share: number | null;
  /** Mean entropy of the next decision at these prefixes; null where the policy reports none. */
  entropy: number | null;
  /** What one continuation from depth t costs, on average: trajectories (1), policy calls, generated tokens. */
  cost: { trajectories: 1; turns: number | null; tokens: number | null };
}

const mean = (xs: readonly number[]): number | null => (xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length);

/**
 * The unbiased estimate of V(1 − V) from n Bernoulli(V) outcomes with s successes:
 * n/(n − 1) · V̂(1 − V̂) = s(n − s) / (n(n − 1)), V̂ = s/n (E[V̂(1 − V̂)] = V(1 − V)(n − 1)/n).
 */
export function contrastEstimate(outcomes: readonly number[]): number {
  const n = outcomes.length;
  if (n < 2) throw new RangeError(`V(1 − V) needs at least 2 outcomes, got ${n}`);
  const s = outcomes.reduce((a, b) => a + b, 0);
  return (s * (n - s)) / (n * (n - 1));
}

/**
 * Proposition 2 per depth: E[[Z]_{t:T} | F_t] = V_t(1 − V_t), estimated from the k outcomes of each
 * prefix. `endedAt.get(T)` counts expanded bare rollouts of length T: from depth T on their V_t is their
 * reward, so their open contrast is exactly 0; they enter the share, not the per-prefix means. A prefix with
 * fewer than two finished trajectories (errors) gives no estimate and is left out.
 */
export function depthRows(samples: readonly PrefixSample[], endedAt: ReadonlyMap<number, number>): DepthRow[] {
  const byDepth = new Map<number, PrefixSample[]>();
  for (const s of samples) if (s.outcomes.length >= 2) byDepth.set(s.depth, [...(byDepth.get(s.depth) ?? []), s]);
  // Down to the depth where the last expanded rollout ended (its row shows nothing left open).
  const last = Math.max(0, ...byDepth.keys(), ...[...endedAt].filter(([, n]) => n > 0).map(([d]) => d));
  const closedBy = (t: number) => [...endedAt].reduce((a, [d, n]) => a + (d <= t ? n : 0), 0);
  const rows: DepthRow[] = [];
  let open0: number | null = null;
  for (let depth = 0; depth <= last; depth++) {
    const group = byDepth.get(depth) ?? [];
    const closed = depth === 0 ? 0 : closedBy(depth);
    if (group.length === 0 && closed === 0) continue;
    const contrasts = group.map((s) => contrastEstimate(s.outcomes));
    const contrast = mean(contrasts);
    // Over all rollouts at this depth: open prefixes contribute their estimate, ended rollouts 0.
    const all = group.length + closed > 0 ? contrasts.reduce((a, b) => a + b, 0) / (group.length + closed) : null;
    if (depth === 0) open0 = contrast;
    const truths = group.filter((s) => s.truth !== undefined).map((s) => s.truth! * (1 - s.truth!));
    const ents = group.flatMap((s) => (s.entropies.length ? [mean(s.entropies)!] : []));
    const costs = group.flatMap((s) => s.costs);
    rows.push({
      depth,
      prefixes: group.length,
      ended: closed,
      meanV: mean(group.map((s) => mean(s.outcomes)!)),
      contrast,
      contrastPlugIn: mean(
        group.map((s) => {
          const v = mean(s.outcomes)!;
          return v * (1 - v);
        }),
      ),
      ...(truths.length ? { trueContrast: mean(truths) } : {}),
      share: open0 !== null && open0 > 0 && all !== null ? all / open0 : null,
      entropy: mean(ents),
      cost: { trajectories: 1, turns: mean(costs.map((c) => c.turns)), tokens: mean(costs.map((c) => c.tokens)) },
    });
  }
  return rows;
}

/** A trajectory's nodes from its first node down to its leaf (first children: the trajectory's own turns). */
function chain(tree: RolloutTree, firstId: string): TreeNode[] {
  const nodes: TreeNode[] = [];
  let n = getNode(tree, firstId);
  for (;;) {
    nodes.push(n);
    if (n.children.length === 0) return nodes;
    n = getNode(tree, n.children[0]!);
  }
}

/** The trajectories started right below `node` (ids in `firsts`) as one sample at node.depth. */
function sampleBelow(tree: RolloutTree, node: TreeNode, firsts: readonly string[], truth?: (node: TreeNode) => number | undefined): PrefixSample {
  const outcomes: number[] = [];
  const entropies: number[] = [];
  const costs: Array<{ turns: number; tokens: number }> = [];
  for (const id of firsts) {
    const nodes = chain(tree, id);
    const leaf = nodes[nodes.length - 1]!;
    if (leaf.reward !== undefined) outcomes.push(leaf.reward);
    const h = nodes[0]!.turn?.entropy;
    if (h !== undefined) entropies.push(h);
    costs.push({ turns: nodes.length, tokens: nodes.reduce((a, x) => a + (x.turn?.generatedTokens ?? 0), 0) });
  }
  const v = truth?.(node);
  return { depth: node.depth, outcomes, entropies, costs, ...(v !== undefined ? { truth: v } : {}) };
}

/**
 * Reads a diagnosis tree: the root's bare rollouts are the depth-0 sample; each of the first
 * `expanded` bare rollouts (slots 0 … expanded − 1) contributes, at every intermediate prefix
 * (1 ≤ t < T_j), the sample of that prefix's continuations; `endedAt` counts those rollouts by length T_j.
 * `truth(node)` gives the true V at a node where the environment knows it.
 */
export function treeSamples(
  tree: RolloutTree,
  expanded: number,
  truth?: (node: TreeNode) => number | undefined,
): { samples: PrefixSample[]; endedAt: Map<number, number> } {
  const top = root(tree);
  const bare = top.children.filter((id) => getNode(tree, id).origin === 'bare');
  const samples: PrefixSample[] = [sampleBelow(tree, top, bare, truth)];
  const ended = new Map<number, number>();
  for (const id of bare.slice(0, expanded)) {
    const nodes = chain(tree, id);
    const leaf = nodes[nodes.length - 1]!;
    // A failed bare rollout has no outcome and was not expanded: it is in neither the open nor the ended count.
    if (leaf.reward === undefined) continue;
    for (const node of nodes.slice(0, -1)) {
      const conts = node.children.filter((c) => getNode(tree, c).origin === 'continuation');
      samples.push(sampleBelow(tree, node, conts, truth));
    }
    ended.set(leaf.depth, (ended.get(leaf.depth) ?? 0) + 1);
  }
  return { samples, endedAt: ended };
}
