import { buildForest, ForestError } from './forest.ts';
import type { Forest, ForestNode } from './types.ts';

export interface ForestInputOptions {
  /** Reject leaves without reward (the CLI contract); library callers may allow failed trajectories. Default true. */
  requireLeafRewards?: boolean;
}

/**
 * Reads the CLI's flat forest `{"nodes":[{"id","parent","reward"?,"length"?}, ...]}` from parsed JSON.
 * Every problem becomes a ForestError whose message names the node (index and id) and the field.
 */
export function parseForestInput(raw: unknown, options: ForestInputOptions = {}): Forest {
  if (typeof raw !== 'object' || raw === null || !Array.isArray((raw as { nodes?: unknown }).nodes)) {
    throw new ForestError('bad_shape', '', 'nodes', 'input must be an object with a "nodes" array, e.g. {"nodes":[{"id":"q1","parent":null}, ...]}');
  }
  const extra = Object.keys(raw).filter((k) => k !== 'nodes');
  if (extra.length > 0) throw new ForestError('bad_shape', '', extra[0]!, `input.${extra[0]}: unknown key; the input is {"nodes": [...]} only`);
  const items = (raw as { nodes: unknown[] }).nodes;
  const nodes = items.map((item, k) => readNode(item, k));
  const forest = buildForest(nodes);
  if (options.requireLeafRewards ?? true) {
    for (let i = 0; i < nodes.length; i++) {
      if (forest.children[i].length === 0 && forest.parent[i] >= 0 && forest.reward[i] === undefined) {
        throw new ForestError(
          'missing_reward',
          nodes[i].id,
          'reward',
          `nodes[${i}] (id "${nodes[i].id}").reward: leaf has no reward; give every leaf a numeric reward`,
        );
      }
    }
  }
  return forest;
}

const NODE_KEYS = new Set(['id', 'parent', 'reward', 'length']);

function readNode(item: unknown, k: number): ForestNode {
  const where = `nodes[${k}]`;
  if (typeof item !== 'object' || item === null || Array.isArray(item)) {
    throw new ForestError('bad_shape', '', where, `${where}: expected an object {"id","parent",...}, got ${JSON.stringify(item)}`);
  }
  const o = item as Record<string, unknown>;
  if (typeof o.id !== 'string' || o.id === '') {
    throw new ForestError('bad_shape', '', `${where}.id`, `${where}.id: expected a non-empty string, got ${JSON.stringify(o.id)}`);
  }
  const named = `${where} (id "${o.id}")`;
  // A misspelt key (e.g. "lenght") would otherwise be ignored and the node computed without it.
  const unknown = Object.keys(o).find((key) => !NODE_KEYS.has(key));
  if (unknown !== undefined)
    throw new ForestError('bad_shape', o.id, unknown, `${named}.${unknown}: unknown key; a node has ${[...NODE_KEYS].map((x) => `"${x}"`).join(', ')}`);
  if (!('parent' in o) || (o.parent !== null && typeof o.parent !== 'string')) {
    throw new ForestError('bad_shape', o.id, 'parent', `${named}.parent: expected a node id or null (for a prompt), got ${JSON.stringify(o.parent)}`);
  }
  const node: ForestNode = { id: o.id, parent: o.parent as string | null };
  if (o.reward !== undefined) {
    if (typeof o.reward !== 'number' || !Number.isFinite(o.reward)) {
      throw new ForestError('bad_reward', o.id, 'reward', `${named}.reward: expected a finite number, got ${JSON.stringify(o.reward)}`);
    }
    node.reward = o.reward;
  }
  if (o.length !== undefined) {
    if (typeof o.length !== 'number' || !Number.isInteger(o.length) || o.length < 0) {
      throw new ForestError('bad_length', o.id, 'length', `${named}.length: expected a non-negative integer token count, got ${JSON.stringify(o.length)}`);
    }
    node.length = o.length;
  }
  return node;
}
