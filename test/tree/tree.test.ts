import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  addTurn,
  createTree,
  endTrajectory,
  targets,
  leaves,
  pathTo,
  maxDepth,
  branchPoints,
  isMixed,
  treeFromJSON,
  treeToJSON,
  TreeError,
  type Turn,
} from '../../src/tree/index.ts';

const turn = (input: string): Turn => ({ thought: '', action: { type: 'search', input }, observation: `obs ${input}` });

/** q1 ─┬─ a ─┬─ a1 (r=1)        two bare rollouts; a continuation branched after turn a
 *      │     └─ a' ─ a'1 (r=0)
 *      └─ b ── b1 (r=0) */
function sample() {
  const t = createTree('q1', 'Who?');
  const a = addTurn(t, 'q1', turn('a'), { origin: 'bare', slot: 0 });
  const b = addTurn(t, 'q1', turn('b'), { origin: 'bare', slot: 1 });
  const a1 = addTurn(t, a.id, turn('a1'), { origin: 'bare' });
  const b1 = addTurn(t, b.id, turn('b1'), { origin: 'bare' });
  const a2 = addTurn(t, a.id, turn("a'"), { origin: 'continuation' });
  const a21 = addTurn(t, a2.id, turn("a'1"), { origin: 'continuation' });
  endTrajectory(t, a1.id, 'answer', 1);
  endTrajectory(t, b1.id, 'answer', 0);
  endTrajectory(t, a21.id, 'answer', 0);
  return t;
}

test('ids are stable paths of slots, independent of content', () => {
  const t = sample();
  assert.deepEqual(Object.keys(t.nodes), ['q1', 'q1/0', 'q1/1', 'q1/0/0', 'q1/1/0', 'q1/0/1', 'q1/0/1/0']);
  assert.deepEqual(
    pathTo(t, 'q1/0/1/0').map((n) => n.turn!.action.input),
    ['a', "a'", "a'1"],
  );
});

test('bottom-up targets are the success rate of the leaves below', () => {
  const tg = targets(sample());
  assert.deepEqual(tg.get('q1'), { target: 1 / 3, count: 3 });
  assert.deepEqual(tg.get('q1/0'), { target: 0.5, count: 2 });
  assert.deepEqual(tg.get('q1/1'), { target: 0, count: 1 });
  assert.deepEqual(tg.get('q1/0/0'), { target: 1, count: 1 });
});

test('queries: leaves, depth, branch points, mixedness', () => {
  const t = sample();
  assert.equal(leaves(t).length, 3);
  assert.equal(maxDepth(t), 3);
  assert.deepEqual(
    branchPoints(t).map((n) => n.id),
    ['q1', 'q1/0'],
  );
  assert.equal(isMixed(t), true);
  assert.equal(isMixed(t, 'q1/1'), false);
});

test('a failed trajectory has no reward and no target', () => {
  const t = createTree('q2', 'x');
  const a = addTurn(t, 'q2', turn('a'), { origin: 'bare' });
  endTrajectory(t, a.id, 'error');
  assert.equal(targets(t).size, 0);
});

test('misuse throws named errors', () => {
  const t = sample();
  assert.throws(() => addTurn(t, 'q1/0/0', turn('x'), { origin: 'bare' }), TreeError);
  assert.throws(() => addTurn(t, 'q1', turn('x'), { origin: 'bare', slot: 0 }), TreeError);
  assert.throws(() => endTrajectory(t, 'q1/0', 'answer', 1), TreeError);
  assert.throws(() => createTree('a/b', 'x'), TreeError);
});

test('JSON round-trip is exact and validation names the broken field', () => {
  const t = sample();
  assert.deepEqual(treeFromJSON(treeToJSON(t)), t);
  const bad = JSON.parse(treeToJSON(t));
  bad.nodes['q1/0/0'].reward = 2;
  assert.throws(() => treeFromJSON(JSON.stringify(bad)), /reward/);
  const orphan = JSON.parse(treeToJSON(t));
  orphan.nodes['q1'].children = ['q1/0'];
  assert.throws(() => treeFromJSON(JSON.stringify(orphan)), /does not list/);
});
