import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  buildForest,
  createEstimator,
  ForestError,
  forestFromTrees,
  parseForestInput,
  tokenWhiten,
  UnknownEstimatorError,
  type ForestNode,
} from '../../src/advantage/index.ts';
import { addTurn, createTree, endTrajectory, pathTo, type Turn } from '../../src/tree/index.ts';
import { createRng } from '../../src/util/rng.ts';
import { assertClose, assertSameAdvantages, E1 } from './fixtures.ts';

function issueOf(nodes: unknown): string {
  try {
    parseForestInput(nodes);
  } catch (e) {
    if (e instanceof ForestError) return `${e.issue} ${e.id} ${e.field}`;
    throw e;
  }
  return 'accepted';
}

test('bad forests are rejected with the node and field named', () => {
  const q = { id: 'q', parent: null };
  assert.equal(issueOf({ nodes: [q, { id: 'a', parent: 'q', reward: 1 }, { id: 'a', parent: 'q', reward: 0 }] }), 'duplicate_id a id');
  assert.equal(issueOf({ nodes: [q, { id: 'a', parent: 'zz', reward: 1 }] }), 'unknown_parent a parent');
  assert.equal(issueOf({ nodes: [q, { id: 'a', parent: 'b' }, { id: 'b', parent: 'a' }, { id: 'c', parent: 'q', reward: 1 }] }), 'cycle a parent');
  assert.equal(issueOf({ nodes: [q, { id: 'a', parent: 'q' }] }), 'missing_reward a reward');
  assert.equal(issueOf({ nodes: [q, { id: 'a', parent: 'q', reward: '1' }] }), 'bad_reward a reward');
  assert.equal(issueOf({ nodes: [q, { id: 'a', parent: 'q', reward: 1, length: -3 }] }), 'bad_length a length');
  assert.equal(issueOf({ nodes: [q, { id: 'a', parent: 'q', reward: 1 }, { id: 'a1', parent: 'a', reward: 0 }] }), 'reward_on_inner_node a reward');
  assert.equal(issueOf({ nodes: [{ id: 'q', parent: null, reward: 1 }] }), 'reward_on_root q reward');
  assert.equal(issueOf({ nodes: [q, { id: 'a', parent: 'q', length: 5 }, { id: 'a1', parent: 'a', reward: 0 }] }), 'length_on_inner_node a length');
  assert.equal(issueOf({ nodes: [{ id: 'q', parent: null, length: 2 }] }), 'length_on_inner_node q length');
  assert.equal(issueOf({ nodes: 'x' }), 'bad_shape  nodes');
  assert.equal(issueOf({ nodes: [{ parent: null }] }), 'bad_shape  nodes[0].id');
  assert.equal(issueOf({ nodes: [q, { id: 'a', reward: 1 }] }), 'bad_shape a parent');
  assert.equal(issueOf({ nodes: E1 }), 'accepted');
});

test('the library accepts leaves without reward (failed trajectories); the CLI contract does not', () => {
  const nodes = [
    { id: 'q', parent: null },
    { id: 'a', parent: 'q', reward: 1 },
    { id: 'b', parent: 'q', reward: 0 },
    { id: 'c', parent: 'q' },
  ];
  const forest = parseForestInput({ nodes }, { requireLeafRewards: false });
  assert.deepEqual(
    createEstimator('grpo')
      .estimate(forest)
      .map((l) => l.id),
    ['a', 'b'],
  );
  assert.throws(() => parseForestInput({ nodes }), ForestError);
});

test('unknown estimator names fail when chosen', () => {
  assert.throws(
    () => createEstimator('ppo'),
    (e: unknown) => e instanceof UnknownEstimatorError && /grpo, tree-grpo, treepo, trace/.test(e.message),
  );
});

const turn = (tokens: number): Turn => ({ thought: '', action: { type: 'search', input: 'x' }, observation: 'o', generatedTokens: tokens });

test('a RolloutTree converts to the same forest as the flat form: same advantages, paths from pathTo', () => {
  // E1 as a RolloutTree: lengths are sums of generated tokens along each path.
  const t = createTree('q', 'prompt');
  const a = addTurn(t, 'q', turn(1), { origin: 'bare' });
  const a1 = addTurn(t, a.id, turn(3), { origin: 'bare' }); // 1 + 3 = 4
  const a2 = addTurn(t, a.id, turn(2), { origin: 'continuation' });
  const a21 = addTurn(t, a2.id, turn(3), { origin: 'continuation' }); // 1 + 2 + 3 = 6
  const a3 = addTurn(t, a.id, turn(1), { origin: 'continuation' }); // 1 + 1 = 2
  const b = addTurn(t, 'q', turn(1), { origin: 'bare' });
  const b1 = addTurn(t, b.id, turn(1), { origin: 'bare' }); // 2
  const c = addTurn(t, 'q', turn(3), { origin: 'bare' }); // 3
  const failed = addTurn(t, b.id, turn(7), { origin: 'continuation' });
  for (const [n, r] of [
    [a1, 1],
    [a21, 0],
    [a3, 1],
    [b1, 0],
    [c, 1],
  ] as const)
    endTrajectory(t, n.id, 'answer', r);
  endTrajectory(t, failed.id, 'error');
  const rename = new Map([
    ['q', 'q'],
    [a.id, 'a'],
    [a1.id, 'a1'],
    [a2.id, 'a2'],
    [a21.id, 'a21'],
    [a3.id, 'a3'],
    [b.id, 'b'],
    [b1.id, 'b1'],
    [c.id, 'c'],
  ]);
  const fromTree = forestFromTrees([t]);
  for (const name of ['grpo', 'tree-grpo', 'treepo', 'trace']) {
    const est = createEstimator(name);
    const got = est.estimate(fromTree);
    for (const l of got)
      assert.deepEqual(
        l.path,
        pathTo(t, l.id).map((n) => n.id),
        `${name} ${l.id} path`,
      );
    const renamed = got.map((l) => ({ ...l, id: rename.get(l.id)!, path: l.path.map((p) => rename.get(p)!) }));
    assertSameAdvantages(renamed, est.estimate(buildForest(E1)), 1e-12, name);
  }
});

test('token whitening matches a literal per-token loop', () => {
  const rng = createRng(7);
  for (let s = 0; s < 100; s++) {
    const n = 1 + rng.int(12);
    const x = Array.from({ length: n }, () => rng.next() * 4 - 2);
    const w = Array.from({ length: n }, () => rng.int(50));
    const tokens: number[] = [];
    x.forEach((v, j) => {
      for (let t = 0; t < w[j]; t++) tokens.push(v);
    });
    const got = tokenWhiten(x, w);
    if (tokens.length < 2) {
      assert.ok(got.every((v) => v === 0));
      continue;
    }
    let mean = 0;
    for (const v of tokens) mean += v;
    mean /= tokens.length;
    let ss = 0;
    for (const v of tokens) ss += (v - mean) ** 2;
    const std = Math.sqrt(ss / (tokens.length - 1) + 1e-8);
    x.forEach((v, j) => assertClose(got[j], (v - mean) / std, 1e-9, `case ${s} value ${j}`));
  }
});

test('ids of several prompts in one batch must not collide', () => {
  const nodes: ForestNode[] = [
    { id: 'q', parent: null },
    { id: 'q', parent: null },
  ];
  assert.throws(() => buildForest(nodes), ForestError);
});
