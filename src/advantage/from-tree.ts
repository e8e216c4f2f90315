import type { RolloutTree, TreeNode, Turn } from '../tree/index.ts';
import { buildForest } from './forest.ts';
import type { Forest, ForestNode, LeafAdvantage } from './types.ts';

/** Generated tokens of one turn: `generatedTokens`, else the mask's sum, else 1 (as the Turn type documents). */
export function turnTokens(turn: Turn | undefined): number {
  if (!turn) return 0;
  if (turn.generatedTokens !== undefined) return turn.generatedTokens;
  if (turn.tokens) return turn.tokens.mask.reduce((a, b) => a + b, 0);
  return 1;
}

/**
 * Converts a batch of rollout trees (one per prompt) to the estimators' forest. A leaf's length is the
 * sum of generated tokens along its path, because a trainer sees each leaf as one sequence that repeats
 * the shared prefix. Leaves without reward (failed trajectories) stay in the forest and are skipped.
 */
export function forestFromTrees(trees: readonly RolloutTree[]): Forest {
  const nodes: ForestNode[] = [];
  for (const tree of trees) {
    const tokensTo = new Map<string, number>();
    for (const n of topDown(tree)) {
      const above = n.parent === null ? 0 : tokensTo.get(n.parent)!;
      tokensTo.set(n.id, above + turnTokens(n.turn));
      const isLeaf = n.children.length === 0;
      const node: ForestNode = { id: n.id, parent: n.parent };
      if (n.reward !== undefined) node.reward = n.reward;
      if (isLeaf && n.parent !== null) node.length = tokensTo.get(n.id)!;
      nodes.push(node);
    }
  }
  return buildForest(nodes);
}

function topDown(tree: RolloutTree): TreeNode[] {
  const out: TreeNode[] = [];
  const stack = [tree.nodes[tree.promptId]];
  while (stack.length > 0) {
    const n = stack.pop()!;
    out.push(n);
    for (let i = n.children.length - 1; i >= 0; i--) stack.push(tree.nodes[n.children[i]]);
  }
  return out;
}

/**
 * The prompt id each leaf of `advantages` belongs to, read from the trees that hold the leaves (never
 * from the shape of node ids). A leaf in none of the trees is an error of the caller.
 */
export function leafPrompts(advantages: readonly LeafAdvantage[], trees: readonly RolloutTree[]): Map<string, string> {
  const promptOf = new Map<string, string>();
  const wanted = new Set(advantages.map((a) => a.id));
  for (const t of trees) for (const id in t.nodes) if (wanted.has(id)) promptOf.set(id, t.promptId);
  for (const a of advantages) if (!promptOf.has(a.id)) throw new RangeError(`leaf "${a.id}" is in none of the ${trees.length} trees`);
  return promptOf;
}

/**
 * The one place importance weights are applied: each leaf's advantages times its tree's root `weight`
 * (set by a strategy that draws prompts unevenly: defensive), so the update and every export of the
 * step estimate the uniform objective over the candidates, whichever estimator computed them.
 */
export function importanceWeighted(advantages: readonly LeafAdvantage[], trees: readonly RolloutTree[]): LeafAdvantage[] {
  const weightOf = new Map(
    trees.flatMap((t) => {
      const w = t.nodes[t.promptId]?.weight;
      return w === undefined ? [] : [[t.promptId, w] as const];
    }),
  );
  if (weightOf.size === 0) return [...advantages];
  const promptOf = leafPrompts(advantages, trees);
  return advantages.map((adv) => {
    const w = weightOf.get(promptOf.get(adv.id)!) ?? 1;
    return w === 1 ? adv : { ...adv, advantage: adv.advantage * w, turns: adv.turns.map((a) => a * w) };
  });
}
