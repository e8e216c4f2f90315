import type { EndReason, Origin, RolloutTree, TreeNode, Turn } from './types.ts';

/** Raised when a tree operation is given an id or state that does not fit the tree. */
export class TreeError extends Error {
  override name = 'TreeError';
}

export function createTree(promptId: string, prompt: string): RolloutTree {
  if (promptId.includes('/')) throw new TreeError(`prompt id "${promptId}" must not contain "/"`);
  const root: TreeNode = { id: promptId, parent: null, depth: 0, children: [], origin: 'root' };
  // An object V8 keeps as a hash table from the start: made without a prototype (V8 makes those in
  // dictionary mode), then given the usual one, so it reads, compares and serialises as a plain object.
  // A literal gets a new hidden class for every node id added instead (ids are unique across trees, so
  // no two trees share one), which made adding a node cost several µs at thousands of trees (bench/scale).
  const nodes = Object.setPrototypeOf(Object.create(null), Object.prototype) as Record<string, TreeNode>;
  nodes[promptId] = root;
  return { promptId, prompt, nodes };
}

export function getNode(tree: RolloutTree, id: string): TreeNode {
  const node = tree.nodes[id];
  if (!node) throw new TreeError(`no node "${id}" in tree "${tree.promptId}"`);
  return node;
}

export function root(tree: RolloutTree): TreeNode {
  return getNode(tree, tree.promptId);
}

/** The id a child would get in a given slot: stable, derived from the path, never from content. */
export function childId(parentId: string, slot: number): string {
  return `${parentId}/${slot}`;
}

/**
 * Adds a turn below `parentId`. `slot` fixes the child's id so that concurrent generation still gives
 * reproducible ids (the engine assigns slots when it allocates); by default the next free slot.
 */
export function addTurn(tree: RolloutTree, parentId: string, turn: Turn, options: { origin: Exclude<Origin, 'root'>; slot?: number }): TreeNode {
  const parent = getNode(tree, parentId);
  if (parent.end !== undefined) throw new TreeError(`node "${parentId}" ended its trajectory; it cannot have children`);
  const id = childId(parentId, options.slot ?? parent.children.length);
  if (tree.nodes[id]) throw new TreeError(`node "${id}" already exists`);
  const node: TreeNode = { id, parent: parentId, depth: parent.depth + 1, turn, children: [], origin: options.origin };
  tree.nodes[id] = node;
  const siblings = parent.children;
  siblings.push(id);
  // Kept in slot order; a child usually arrives in order (a lone continuation, the next slot), so the sort is skipped then.
  if (siblings.length > 1 && compareIds(siblings[siblings.length - 2]!, id) > 0) siblings.sort(compareIds);
  return node;
}

/** Marks a node as the end of a trajectory; a reward is given only when the episode finished. */
export function endTrajectory(tree: RolloutTree, id: string, end: EndReason, reward?: number, score?: number): TreeNode {
  const node = getNode(tree, id);
  if (node.children.length > 0) throw new TreeError(`node "${id}" has children; only a leaf can end a trajectory`);
  if (reward !== undefined && reward !== 0 && reward !== 1) throw new TreeError(`reward of "${id}" must be 0 or 1, got ${reward}`);
  node.end = end;
  if (reward !== undefined) node.reward = reward;
  if (score !== undefined) node.score = score;
  return node;
}

/**
 * The first slot after every child of `node`, where the next planned trajectories go. Not
 * `children.length`: a planned trajectory that made no node (cancelled, or not admitted) leaves its
 * slot empty, and counting children would give a later one an id already taken.
 */
export function nextSlot(node: TreeNode): number {
  let s = 0;
  for (const c of node.children) s = Math.max(s, slotOf(c) + 1);
  return s;
}

function compareIds(a: string, b: string): number {
  return slotOf(a) - slotOf(b);
}

/** A node's slot under its parent: the last part of its id. */
function slotOf(id: string): number {
  return Number(id.slice(id.lastIndexOf('/') + 1));
}

export function children(tree: RolloutTree, id: string): TreeNode[] {
  return getNode(tree, id).children.map((c) => getNode(tree, c));
}

/** Nodes that ended a trajectory (with or without reward). */
export function leaves(tree: RolloutTree, under?: string): TreeNode[] {
  const out: TreeNode[] = [];
  walk(tree, under ?? tree.promptId, (n) => {
    if (n.end !== undefined) out.push(n);
  });
  return out;
}

/** Leaves that carry a reward (finished episodes). */
export function rewardedLeaves(tree: RolloutTree, under?: string): TreeNode[] {
  return leaves(tree, under).filter((n) => n.reward !== undefined);
}

/** Depth-first, children in slot order. */
export function walk(tree: RolloutTree, from: string, visit: (node: TreeNode) => void): void {
  const stack = [getNode(tree, from)];
  while (stack.length > 0) {
    const node = stack.pop()!;
    visit(node);
    for (let i = node.children.length - 1; i >= 0; i--) stack.push(getNode(tree, node.children[i]));
  }
}

/** Nodes from the root (exclusive) down to `id` (inclusive): the prefix history H. */
export function pathTo(tree: RolloutTree, id: string): TreeNode[] {
  const path: TreeNode[] = [];
  for (let node: TreeNode | undefined = getNode(tree, id); node && node.parent !== null; node = tree.nodes[node.parent]) {
    path.push(node);
  }
  return path.reverse();
}

/** The turns of the prefix ending at `id` (empty for the root). */
export function turnsTo(tree: RolloutTree, id: string): Turn[] {
  return pathTo(tree, id).map((n) => n.turn!);
}

/** Ancestors of `id`, nearest first, ending at the root. */
export function ancestors(tree: RolloutTree, id: string): TreeNode[] {
  const out: TreeNode[] = [];
  for (let p = getNode(tree, id).parent; p !== null; p = getNode(tree, p).parent) out.push(getNode(tree, p));
  return out;
}

export function maxDepth(tree: RolloutTree): number {
  let d = 0;
  for (const n of Object.values(tree.nodes)) d = Math.max(d, n.depth);
  return d;
}

/** Inner nodes with more than one child: the places where trajectories diverge. */
export function branchPoints(tree: RolloutTree): TreeNode[] {
  return Object.values(tree.nodes).filter((n) => n.children.length > 1);
}

/** Target of one node: success rate of the rewarded leaves below it, with their count. */
export interface NodeTarget {
  target: number;
  count: number;
}

/**
 * Bottom-up predictor targets (TRACE-SPEC §3 step 5): a leaf's target is its reward; an inner node's is
 * the success rate of all rewarded leaves below it (the visit-weighted mean of its children). Nodes with
 * no rewarded leaf below (only failed trajectories) get no target.
 */
export function targets(tree: RolloutTree): Map<string, NodeTarget> {
  const sums = new Map<string, { s: number; c: number }>();
  const order: TreeNode[] = [];
  walk(tree, tree.promptId, (n) => order.push(n));
  for (let i = order.length - 1; i >= 0; i--) {
    const n = order[i];
    let s = 0;
    let c = 0;
    if (n.reward !== undefined) {
      s = n.reward;
      c = 1;
    }
    for (const ch of n.children) {
      const t = sums.get(ch)!;
      s += t.s;
      c += t.c;
    }
    sums.set(n.id, { s, c });
  }
  const out = new Map<string, NodeTarget>();
  for (const n of order) {
    const { s, c } = sums.get(n.id)!;
    if (c > 0) out.set(n.id, { target: s / c, count: c });
  }
  return out;
}

/** True when the rewarded leaves below `id` hold both a success and a failure. */
export function isMixed(tree: RolloutTree, id?: string): boolean {
  let ones = 0;
  let zeros = 0;
  for (const l of rewardedLeaves(tree, id)) l.reward === 1 ? ones++ : zeros++;
  return ones > 0 && zeros > 0;
}
