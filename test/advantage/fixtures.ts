import assert from 'node:assert/strict';
import type { ForestNode, LeafAdvantage } from '../../src/advantage/index.ts';
import type { Rng } from '../../src/util/rng.ts';

/**
 * E1, one prompt (rewards in brackets, generated-token lengths after "len"):
 *
 *   q ─┬─ a ─┬─ a1 [1] len 4
 *      │     ├─ a2 ── a21 [0] len 6
 *      │     └─ a3 [1] len 2
 *      ├─ b ── b1 [0] len 2
 *      └─ c [1] len 3
 */
export const E1: ForestNode[] = [
  { id: 'q', parent: null },
  { id: 'a', parent: 'q' },
  { id: 'a1', parent: 'a', reward: 1, length: 4 },
  { id: 'a2', parent: 'a' },
  { id: 'a21', parent: 'a2', reward: 0, length: 6 },
  { id: 'a3', parent: 'a', reward: 1, length: 2 },
  { id: 'b', parent: 'q' },
  { id: 'b1', parent: 'b', reward: 0, length: 2 },
  { id: 'c', parent: 'q', reward: 1, length: 3 },
];

/**
 * E2, two prompts in one batch (all lengths 1):
 *   p1 ─┬─ x1 [1]        p2 ── y0 ── y [1]
 *       └─ x2 [0]
 */
export const E2: ForestNode[] = [
  { id: 'p1', parent: null },
  { id: 'x1', parent: 'p1', reward: 1 },
  { id: 'x2', parent: 'p1', reward: 0 },
  { id: 'p2', parent: null },
  { id: 'y0', parent: 'p2' },
  { id: 'y', parent: 'y0', reward: 1 },
];

export function byId(result: readonly LeafAdvantage[]): Map<string, LeafAdvantage> {
  return new Map(result.map((l) => [l.id, l]));
}

export function assertClose(actual: number, expected: number, tol: number, what: string): void {
  assert.ok(Math.abs(actual - expected) <= tol, `${what}: expected ${expected}, got ${actual} (tolerance ${tol})`);
}

/** Asserts two estimator outputs agree leaf by leaf (scalar and every turn), whatever their order. */
export function assertSameAdvantages(a: readonly LeafAdvantage[], b: readonly LeafAdvantage[], tol: number, what: string): void {
  assert.equal(a.length, b.length, `${what}: leaf count`);
  const mb = byId(b);
  for (const l of a) {
    const o = mb.get(l.id);
    assert.ok(o, `${what}: leaf ${l.id} missing`);
    assertClose(l.advantage, o.advantage, tol, `${what}: ${l.id}`);
    assert.deepEqual(l.path, o.path, `${what}: path of ${l.id}`);
    l.turns.forEach((t, k) => assertClose(t, o.turns[k], tol, `${what}: ${l.id} turn ${k}`));
  }
}

export interface RandomForestOptions {
  prompts?: number;
  /** Make every child subtree of a prompt hold at least two rewarded leaves (no one-leaf groups). */
  noSingletons?: boolean;
  /** Add leaves without reward (failed trajectories). */
  failures?: boolean;
  /** Rewards in {0,1} (default) or uniform reals. */
  continuous?: boolean;
}

/**
 * A random batch: each prompt gets 1–3 bare rollouts (chains of 1–4 turns), then 0–4 continuations
 * branched from random prefixes of existing paths, like TRACE's prefix expansion.
 */
export function randomForest(rng: Rng, options: RandomForestOptions = {}): ForestNode[] {
  const nodes: ForestNode[] = [];
  const reward = () => (options.continuous ? Math.round(rng.next() * 1000) / 100 : rng.int(2));
  const prompts = options.prompts ?? 1 + rng.int(3);
  let serial = 0;
  const chain = (from: string, turns: number, rewarded: boolean): string[] => {
    const ids: string[] = [];
    let parent = from;
    for (let t = 0; t < turns; t++) {
      const id = `n${serial++}`;
      const node: ForestNode = { id, parent };
      if (t === turns - 1) {
        if (rewarded) node.reward = reward();
        node.length = 1 + rng.int(20);
      }
      nodes.push(node);
      ids.push(id);
      parent = id;
    }
    return ids;
  };
  for (let p = 0; p < prompts; p++) {
    const root = `q${p}`;
    nodes.push({ id: root, parent: null });
    const trees = 1 + rng.int(3);
    for (let t = 0; t < trees; t++) {
      const bare = chain(root, 1 + rng.int(4), true);
      const paths = [bare];
      const continuations = (options.noSingletons ? 1 : 0) + rng.int(4);
      for (let k = 0; k < continuations; k++) {
        const path = paths[rng.int(paths.length)];
        // Branch after turn cut (1 ≤ cut < length) when the path is long enough, else beside its first turn.
        const cut = path.length > 1 ? 1 + rng.int(path.length - 1) : 0;
        const from = cut === 0 ? path[0] : path[cut - 1];
        if (cut === 0) {
          // A one-turn rollout cannot be branched inside; grow the tree by branching below its turn instead.
          const leaf = nodes.find((n) => n.id === path[0])!;
          const { reward: r, length } = leaf;
          delete leaf.reward;
          delete leaf.length;
          const keep = chain(path[0], 1, true);
          const keptLeaf = nodes.find((n) => n.id === keep[0])!;
          keptLeaf.reward = r;
          keptLeaf.length = length;
          paths[paths.indexOf(path)] = [path[0], ...keep];
        }
        const prefix = cut === 0 ? [path[0]] : path.slice(0, cut);
        paths.push([...prefix, ...chain(from, 1 + rng.int(3), true)]);
      }
      if (options.failures && rng.next() < 0.5) {
        // A failed trajectory: either a failed bare rollout or a failed continuation below an inner turn.
        const path = paths[rng.int(paths.length)];
        chain(path.length > 1 ? path[0] : root, 1 + rng.int(2), false);
      }
    }
  }
  return nodes;
}

/** Fisher–Yates shuffle of a copy, driven by the seeded generator. */
export function shuffled<T>(rng: Rng, items: readonly T[]): T[] {
  const out = items.slice();
  for (let i = out.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}
