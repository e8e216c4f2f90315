import type { RolloutTree, TreeNode, Turn } from '../tree/index.ts';
import { buildForest } from './forest.ts';
import type { Forest, ForestNode } from './types.ts';

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
