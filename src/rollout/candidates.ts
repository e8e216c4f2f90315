import type { PrefixCandidate, RootCandidate } from '../allocate/types.ts';
import type { Environment, KnowsTruth } from '../env/types.ts';
import type { History } from '../predict/types.ts';
import { getNode, root, turnsTo } from '../tree/index.ts';
import type { RolloutTree, TreeNode } from '../tree/index.ts';
import type { Prompt } from '../tree/types.ts';

/** Ṽ over a batch of histories (the shared predictor's `predict`). */
export type Scorer = (histories: readonly History[]) => number[];

export function knowsTruth(env: unknown): env is KnowsTruth {
  return typeof (env as Partial<KnowsTruth>).trueSuccess === 'function';
}

/**
 * Step 1 of TRACE: the root candidates of a pool, v_i = Ṽ(prompt i) in one batch, the true p where the
 * environment knows it, and each prompt's earlier outcomes where a history is given (knapsack).
 */
export function rootCandidates(prompts: readonly Prompt[], env: unknown, scorer: Scorer, history?: (promptId: string) => { successes: number; trials: number } | undefined): RootCandidate[] {
  const v = scorer(prompts.map((prompt) => ({ prompt, turns: [] })));
  return prompts.map((p, i) => {
    const c: RootCandidate = { promptId: p.id, v: v[i] };
    if (knowsTruth(env)) c.p = env.trueSuccess(p, []);
    const h = history?.(p.id);
    if (h) c.history = h;
    return c;
  });
}

/**
 * The intermediate prefixes (j, t), 1 ≤ t < T_j, of a prompt's finished bare rollouts: for each bare
 * rollout j with a reward r_j (failed trajectories carry none and are skipped), every node on its
 * chain except the leaf. q = Ṽ(H(i, j, t)) from the scorer in one batch; `entropy` is the policy's
 * entropy at turn t + 1 (the decision that follows the prefix); `p` is the true success probability
 * when the environment knows it.
 */
export function prefixCandidates(tree: RolloutTree, prompt: Prompt, env: Environment<unknown>, scorer: Scorer): PrefixCandidate[] {
  const chains: Array<{ nodes: TreeNode[]; r: number }> = [];
  for (const firstId of root(tree).children) {
    const nodes: TreeNode[] = [];
    let n = getNode(tree, firstId);
    if (n.origin !== 'bare') continue;
    for (;;) {
      nodes.push(n);
      if (n.children.length === 0) break;
      n = getNode(tree, n.children[0]);
    }
    const leaf = nodes[nodes.length - 1];
    if (leaf.reward !== undefined) chains.push({ nodes, r: leaf.reward });
  }
  const picked: Array<{ node: TreeNode; next: TreeNode; r: number }> = [];
  for (const { nodes, r } of chains) {
    for (let t = 1; t < nodes.length; t++) picked.push({ node: nodes[t - 1], next: nodes[t], r });
  }
  if (picked.length === 0) return [];
  const histories: History[] = picked.map(({ node }) => ({ prompt, turns: turnsTo(tree, node.id) }));
  const q = scorer(histories);
  if (q.length !== histories.length) throw new RangeError(`scorer returned ${q.length} values for ${histories.length} histories`);
  return picked.map(({ node, next, r }, i) => ({
    id: node.id,
    q: q[i],
    r,
    depth: node.depth,
    ...(next.turn?.entropy !== undefined ? { entropy: next.turn.entropy } : {}),
    ...(knowsTruth(env) ? { p: env.trueSuccess(prompt, histories[i].turns) } : {}),
  }));
}
