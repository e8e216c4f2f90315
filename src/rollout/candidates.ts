import type { PrefixCandidate, RootCandidate } from '../allocate/types.ts';
import type { Environment, KnowsTruth } from '../env/types.ts';
import type { History } from '../predict/types.ts';
import { getNode, root, turnsTo } from '../tree/index.ts';
import type { RolloutTree, TreeNode } from '../tree/index.ts';
import type { Prompt } from '../tree/types.ts';
import type { EngineSettings } from './settings.ts';

/** Ṽ over a batch of histories (the shared predictor's `predict`). */
export type Scorer = (histories: readonly History[]) => number[];

export function knowsTruth(env: unknown): env is KnowsTruth {
  return typeof (env as Partial<KnowsTruth>).trueSuccess === 'function';
}

/**
 * Step 1 of TRACE: the root candidates of a pool, v_i = Ṽ(prompt i) in one batch, and the true p where
 * the environment knows it (what else a strategy reads, it reads in its `perStep`).
 */
export function rootCandidates(prompts: readonly Prompt[], env: unknown, scorer: Scorer): RootCandidate[] {
  const v = scorer(prompts.map((prompt) => ({ prompt, turns: [] })));
  return prompts.map((p, i) => {
    const c: RootCandidate = { promptId: p.id, v: v[i] };
    if (knowsTruth(env)) c.p = env.trueSuccess(p, []);
    return c;
  });
}

/**
 * The intermediate prefixes of a prompt's finished chains: by default its bare rollouts j, giving
 * (j, t) for 1 ≤ t < T_j. A chain is followed from its first node down its first children to a leaf;
 * with a reward r (failed trajectories carry none and are skipped), every node on it except the leaf is
 * a candidate. `starts` names other chains' first nodes instead: the continuations of a previous
 * expansion round, whose own prefixes a later round may expand (trace's `expansionRounds`).
 * q = Ṽ(H) from the scorer in one batch; `entropy` is the policy's entropy at the decision that follows
 * the prefix; `p` is the true success probability when the environment knows it. `withRoot` (a schedule
 * that `offersRoot`, first round only) adds the root itself, of kind 'root', while the bare outcomes all agree.
 */
export function prefixCandidates(
  tree: RolloutTree,
  prompt: Prompt,
  env: Environment<unknown>,
  scorer: Scorer,
  options: { starts?: readonly string[]; withRoot?: boolean; price?: Price } = {},
): PrefixCandidate[] {
  const { starts, withRoot = false, price } = options;
  const chains: Array<{ nodes: TreeNode[]; r: number }> = [];
  const firsts = starts ?? root(tree).children.filter((id) => getNode(tree, id).origin === 'bare');
  for (const firstId of firsts) {
    const nodes: TreeNode[] = [];
    let n = getNode(tree, firstId);
    for (;;) {
      nodes.push(n);
      if (n.children.length === 0) break;
      n = getNode(tree, n.children[0]);
    }
    const leaf = nodes[nodes.length - 1];
    if (leaf.reward !== undefined) chains.push({ nodes, r: leaf.reward });
  }
  const picked: Array<{ node: TreeNode; next: TreeNode; r: number; after: number; cost?: number; root?: true }> = [];
  // An environment that cannot restore a prefix (env.branching: roots-only) offers none: its continuation budget goes to the leftover top-up.
  const prefixChains = env.branching === 'roots-only' ? [] : chains;
  for (const { nodes, r } of prefixChains) {
    for (let t = 1; t < nodes.length; t++)
      picked.push({ node: nodes[t - 1], next: nodes[t], r, after: nodes.length - t, ...(price ? { cost: suffixCost(nodes.slice(t), price) } : {}) });
  }
  // The root (trace's rootResample) is offered only while every bare outcome agrees: a mixed root
  // group has nothing left to flip. Its `after` is the mean length of those rollouts (all their turns).
  const rs = chains.map((c) => c.r);
  if (withRoot && !starts && rs.length > 0 && rs.every((r) => r === rs[0])) {
    const top = root(tree);
    const next = getNode(tree, top.children[0]);
    picked.unshift({
      node: top,
      next,
      r: rs[0],
      after: chains.reduce((a, c) => a + c.nodes.length, 0) / chains.length,
      ...(price ? { cost: price.root } : {}),
      root: true,
    });
  }
  if (picked.length === 0) return [];
  const histories: History[] = picked.map(({ node }) => ({ prompt, turns: turnsTo(tree, node.id) }));
  const q = scorer(histories);
  if (q.length !== histories.length) throw new RangeError(`scorer returned ${q.length} values for ${histories.length} histories`);
  return picked.map(({ node, next, r, after, cost, root: isRoot }, i) => ({
    ...(isRoot ? { kind: 'root' as const } : {}),
    id: node.id,
    q: q[i],
    r,
    depth: node.depth,
    after,
    ...(cost !== undefined ? { cost } : {}),
    ...(next.turn?.entropy !== undefined ? { entropy: next.turn.entropy } : {}),
    ...(knowsTruth(env) ? { p: env.trueSuccess(prompt, histories[i].turns) } : {}),
  }));
}

/**
 * How the engine prices trajectories when the budget is in turns or tokens (absent in trajectories,
 * where every trajectory costs 1): `root` is the expected cost of one bare rollout, a positive integer.
 */
export interface Price {
  unit: 'turns' | 'tokens';
  root: number;
}

/** What these turns cost in the price's unit (at least 1: every trajectory makes a call). */
export function suffixCost(nodes: readonly TreeNode[], price: Pick<Price, 'unit'>): number {
  if (price.unit === 'turns') return Math.max(1, nodes.length);
  let tokens = 0;
  for (const n of nodes) tokens += n.turn?.generatedTokens ?? 0;
  return Math.max(1, tokens);
}

/**
 * The mean cost in `unit` of the bare rollouts of `trees` that finished with a reward; undefined when
 * none did. A trajectory the budget or a failure cut short is not a sample of what a bare rollout
 * costs: counting it would lower the price, plan more roots, cut more of them, and so spiral.
 */
export function meanBareCost(trees: readonly RolloutTree[], unit: Price['unit']): number | undefined {
  let sum = 0;
  let count = 0;
  for (const tree of trees) {
    for (const id of root(tree).children) {
      if (getNode(tree, id).origin !== 'bare') continue;
      const nodes: TreeNode[] = [];
      for (let n = getNode(tree, id); ; n = getNode(tree, n.children[0])) {
        nodes.push(n);
        if (n.children.length === 0) break;
      }
      if (nodes[nodes.length - 1].reward === undefined) continue;
      sum += suffixCost(nodes, { unit });
      count++;
    }
  }
  return count > 0 ? sum / count : undefined;
}

/**
 * The stated prior for the cost of a bare rollout before any step has measured one: half the turn
 * limit, in turns; in tokens, that many turns of an eighth of the per-call token limit each (the
 * defaults: 3 turns, 192 tokens). Only the first step of a run plans with it.
 */
export function priorRootCost(unit: 'turns' | 'tokens', settings: Pick<EngineSettings, 'maxTurns' | 'maxTokensPerTurn'>): number {
  const turns = Math.ceil(settings.maxTurns / 2);
  return unit === 'turns' ? turns : turns * Math.ceil(settings.maxTokensPerTurn / 8);
}

/** The turns from `firstId` down to `leafId` (one trajectory's own nodes, its prefix excluded). */
export function ownTurns(tree: RolloutTree, firstId: string, leafId: string): TreeNode[] {
  const nodes: TreeNode[] = [];
  for (let n = getNode(tree, leafId); ; n = getNode(tree, n.parent)) {
    nodes.unshift(n);
    if (n.id === firstId || n.parent === null) return nodes;
  }
}

/** Each candidate's cost (absent in the trajectories unit: 1). */
export function costs(prefixes: readonly PrefixCandidate[]): ReadonlyMap<string, number> | undefined {
  return prefixes.some((c) => c.cost !== undefined) ? new Map(prefixes.map((c) => [c.id, c.cost ?? 1])) : undefined;
}
