import { flipChance, mixedChance, repeatChance } from '../allocate/index.ts';
import type { RolloutTree, TreeNode } from '../tree/types.ts';
import { isMixed, rewardedLeaves, root } from '../tree/tree.ts';

/**
 * The compact, JSON-able form of a rollout tree that the page embeds for its viewer. Long texts are
 * cut (the page says so), and the allocation reasoning is computed here, not in the browser:
 * for a prefix on a trajectory with observed outcome r and prediction q = Ṽ(prefix),
 *   ρ = r·q + (1 − r)(1 − q)     (chance a new continuation repeats the observed outcome)
 *   V_pref(K) = 1 − ρ^K          (chance that at least one of K continuations flips it)
 * and at the root, with v = Ṽ(prompt) and m bare rollouts, V_root = 1 − v^m − (1 − v)^m — the
 * allocation's own functions (repeatChance, flipChance, mixedChance from src/allocate), so the viewer
 * shows exactly the values the solvers used.
 */
export interface ViewNode {
  id: string;
  depth: number;
  origin: TreeNode['origin'];
  children: string[];
  thought?: string;
  text?: string;
  action?: { type: string; input: string };
  observation?: string;
  error?: string;
  end?: string;
  reward?: number;
  score?: number;
  /** Ṽ at allocation time. */
  predicted?: number;
  /** K continuations allocated from this prefix. */
  expanded?: number;
  /** Observed terminal reward of the trajectory this prefix lies on (the r in ρ). */
  r?: number;
  rho?: number;
  /** 1 − ρ^K for the K allocated here. */
  vPref?: number;
}

export interface ViewTree {
  promptId: string;
  prompt: string;
  /** Bare rollouts from the root (m). */
  m: number;
  /** Ṽ(prompt) when the root was scored. */
  v?: number;
  vRoot?: number;
  leaves: number;
  successes: number;
  mixed: boolean;
  nodes: Record<string, ViewNode>;
}

export interface TextLimits {
  /** Characters kept from each text field. */
  maxChars: number;
}

/**
 * The observed outcome of the trajectory a prefix belongs to: walk down through children of the same
 * origin (the rollout that produced the prefix), else the first child, to a leaf; its reward.
 */
export function observedOutcome(tree: RolloutTree, id: string): number | undefined {
  let node = tree.nodes[id];
  while (node && node.children.length > 0) {
    const kids = node.children.map((c) => tree.nodes[c]).filter((n): n is TreeNode => !!n);
    node = kids.find((k) => k.origin === node!.origin) ?? kids[0];
  }
  return node?.reward;
}

function cut(s: string | undefined, limits: TextLimits): string | undefined {
  if (s === undefined || s === '') return undefined;
  return s.length > limits.maxChars ? `${s.slice(0, limits.maxChars)}… [${s.length - limits.maxChars} more characters cut]` : s;
}

export function toViewTree(tree: RolloutTree, limits: TextLimits): ViewTree {
  const rootNode = root(tree);
  const nodes: Record<string, ViewNode> = {};
  for (const n of Object.values(tree.nodes)) {
    const v: ViewNode = { id: n.id, depth: n.depth, origin: n.origin, children: [...n.children] };
    if (n.turn) {
      v.thought = cut(n.turn.thought, limits);
      v.text = cut(n.turn.text, limits);
      v.action = { type: n.turn.action.type, input: cut(n.turn.action.input, limits) ?? '' };
      v.observation = cut(n.turn.observation, limits);
      if (n.turn.error) v.error = `${n.turn.error.code}: ${cut(n.turn.error.message, limits)}`;
    }
    if (n.end !== undefined) v.end = n.end;
    if (n.reward !== undefined) v.reward = n.reward;
    if (n.score !== undefined) v.score = n.score;
    if (n.predicted !== undefined) v.predicted = n.predicted;
    if (n.expanded !== undefined) v.expanded = n.expanded;
    // ρ applies to intermediate prefixes (1 ≤ t < T): not the root, not a leaf.
    if (n.parent !== null && n.children.length > 0 && n.predicted !== undefined) {
      const r = observedOutcome(tree, n.id);
      if (r !== undefined) {
        v.r = r;
        v.rho = repeatChance(n.predicted, r);
        if (n.expanded !== undefined && n.expanded > 0) v.vPref = flipChance(v.rho, n.expanded);
      }
    }
    nodes[n.id] = v;
  }
  const m = rootNode.children.filter((c) => tree.nodes[c]?.origin === 'bare').length;
  const rewarded = rewardedLeaves(tree);
  const out: ViewTree = {
    promptId: tree.promptId,
    prompt: cut(tree.prompt, limits) ?? '',
    m,
    leaves: rewarded.length,
    successes: rewarded.filter((l) => l.reward === 1).length,
    mixed: isMixed(tree),
    nodes,
  };
  if (rootNode.predicted !== undefined) {
    out.v = rootNode.predicted;
    out.vRoot = mixedChance(rootNode.predicted, m);
  }
  return out;
}
