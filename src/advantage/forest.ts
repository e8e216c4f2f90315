import type { Forest, ForestNode } from './types.ts';

/** What was wrong with a forest; `id` names the node and `field` the offending property. */
export type ForestIssue =
  | 'duplicate_id'
  | 'unknown_parent'
  | 'cycle'
  | 'reward_on_inner_node'
  | 'reward_on_root'
  | 'length_on_inner_node'
  | 'bad_reward'
  | 'bad_length'
  | 'bad_shape'
  | 'missing_reward';

/** Raised for a forest that cannot be read: the message says what, which node and field, and the fix. */
export class ForestError extends Error {
  override name = 'ForestError';
  constructor(
    readonly issue: ForestIssue,
    readonly id: string,
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Validates and indexes a list of nodes. Node order does not matter: children are found through
 * parent links. Rejects duplicate ids, unknown parents, cycles (nodes that never reach a root),
 * rewards or lengths on inner nodes, non-finite rewards and negative or non-integer lengths.
 * A leaf without reward is allowed here — it is a failed trajectory and estimators skip it.
 */
export function buildForest(nodes: readonly ForestNode[]): Forest {
  const index = new Map<string, number>();
  nodes.forEach((n, i) => {
    if (index.has(n.id)) throw new ForestError('duplicate_id', n.id, 'id', `node "${n.id}" appears twice; give every node a unique id`);
    index.set(n.id, i);
  });
  const parent = nodes.map((n) => {
    if (n.parent === null) return -1;
    const p = index.get(n.parent);
    if (p === undefined) {
      throw new ForestError('unknown_parent', n.id, 'parent', `node "${n.id}" has parent "${n.parent}", which is not a node; add it or fix the parent id`);
    }
    return p;
  });
  const children: number[][] = nodes.map(() => []);
  parent.forEach((p, i) => {
    if (p >= 0) children[p].push(i);
  });
  const roots = parent.flatMap((p, i) => (p < 0 ? [i] : []));
  const order = topologicalOrder(roots, children);
  if (order.length < nodes.length) {
    const seen = new Set(order);
    const stuck = nodes.findIndex((_, i) => !seen.has(i));
    throw new ForestError(
      'cycle',
      nodes[stuck].id,
      'parent',
      `node "${nodes[stuck].id}" is on a parent cycle and never reaches a root (parent null); break the cycle`,
    );
  }
  const reward: (number | undefined)[] = [];
  const length: number[] = [];
  nodes.forEach((n, i) => {
    const isLeaf = children[i].length === 0;
    reward.push(checkReward(n, isLeaf));
    length.push(checkLength(n, isLeaf));
  });
  const rewardedLeaves = nodes.flatMap((_, i) => (reward[i] !== undefined ? [i] : []));
  return { ids: nodes.map((n) => n.id), parent, children, reward, length, roots, order, rewardedLeaves };
}

function topologicalOrder(roots: readonly number[], children: readonly (readonly number[])[]): number[] {
  const order: number[] = [];
  for (const r of roots) {
    const stack = [r];
    while (stack.length > 0) {
      const i = stack.pop()!;
      order.push(i);
      for (let k = children[i].length - 1; k >= 0; k--) stack.push(children[i][k]);
    }
  }
  return order;
}

function checkReward(n: ForestNode, isLeaf: boolean): number | undefined {
  if (n.reward === undefined) return undefined;
  if (typeof n.reward !== 'number' || !Number.isFinite(n.reward)) {
    throw new ForestError('bad_reward', n.id, 'reward', `node "${n.id}": reward must be a finite number, got ${JSON.stringify(n.reward)}`);
  }
  if (n.parent === null) {
    throw new ForestError(
      'reward_on_root',
      n.id,
      'reward',
      `node "${n.id}" is a prompt (parent null) and cannot carry a reward; rewards belong to the leaves below it`,
    );
  }
  if (!isLeaf) {
    throw new ForestError('reward_on_inner_node', n.id, 'reward', `node "${n.id}" has children and a reward; only leaves carry rewards — move it to the leaf`);
  }
  return n.reward;
}

function checkLength(n: ForestNode, isLeaf: boolean): number {
  if (n.length === undefined) return isLeaf ? 1 : 0;
  if (typeof n.length !== 'number' || !Number.isInteger(n.length) || n.length < 0) {
    throw new ForestError('bad_length', n.id, 'length', `node "${n.id}": length must be a non-negative integer token count, got ${JSON.stringify(n.length)}`);
  }
  if (n.parent === null) {
    throw new ForestError(
      'length_on_inner_node',
      n.id,
      'length',
      `node "${n.id}" is a prompt (parent null) and cannot carry a length; length belongs on the leaves below it`,
    );
  }
  if (!isLeaf) {
    throw new ForestError(
      'length_on_inner_node',
      n.id,
      'length',
      `node "${n.id}" has children and a length; length is the whole trajectory's generated tokens and belongs on its leaf`,
    );
  }
  return n.length;
}

/** Node ids from the root (exclusive) down to `leaf` (inclusive), as indices. */
export function pathIndices(forest: Forest, leaf: number): number[] {
  const path: number[] = [];
  for (let i = leaf; forest.parent[i] >= 0; i = forest.parent[i]) path.push(i);
  return path.reverse();
}
