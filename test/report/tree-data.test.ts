import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addTurn, createTree, endTrajectory } from '../../src/tree/index.ts';
import { flipChance as vPref, mixedChance as vRoot, repeatChance } from '../../src/allocate/index.ts';
import { observedOutcome, toViewTree } from '../../src/report/tree-data.ts';

/** ρ(r, q) as the viewer labels it: the allocation's repeatChance(q, r). */
const rho = (r: number, q: number) => repeatChance(q, r);

const close = (a: number | undefined, b: number) => assert.ok(a !== undefined && Math.abs(a - b) < 1e-12, `${a} vs ${b}`);
const turn = (type: string, input: string) => ({ thought: 'th', action: { type, input }, observation: 'obs' });

test('ρ, V_pref and V_root by hand', () => {
  close(rho(1, 0.8), 0.8); // a success where success was likely is likely to repeat
  close(rho(0, 0.8), 0.2); // a failure where success was likely is likely to flip
  close(vPref(0.2, 2), 1 - 0.04);
  close(vRoot(0.5, 2), 0.5);
  close(vRoot(0.3, 3), 1 - 0.027 - 0.343);
  assert.equal(vRoot(0.4, 0), 0);
  assert.equal(vRoot(0.4, 1), 0);
});

/**
 * q ─ a(bare, Ṽ .7, K=1) ─ b(bare) r=0
 *                        └ c(continuation) r=1
 *   └ d(bare, Ṽ .4) ─ e(bare) r=1
 */
function sample() {
  const t = createTree('q', 'a question');
  t.nodes.q.predicted = 0.6;
  const a = addTurn(t, 'q', turn('search', 'x'), { origin: 'bare' });
  const b = addTurn(t, a.id, turn('answer', 'no'), { origin: 'bare' });
  endTrajectory(t, b.id, 'answer', 0);
  const c = addTurn(t, a.id, turn('answer', 'yes'), { origin: 'continuation' });
  endTrajectory(t, c.id, 'answer', 1, 0.9);
  a.predicted = 0.7;
  a.expanded = 1;
  const d = addTurn(t, 'q', turn('search', 'y'), { origin: 'bare' });
  d.predicted = 0.4;
  const e = addTurn(t, d.id, turn('answer', 'yes'), { origin: 'bare' });
  endTrajectory(t, e.id, 'answer', 1);
  return t;
}

test('a prefix’s observed outcome follows its own rollout, not the continuation', () => {
  const t = sample();
  assert.equal(observedOutcome(t, 'q/0'), 0);
  assert.equal(observedOutcome(t, 'q/1'), 1);
});

test('the view tree carries Ṽ, K, r, ρ and V_pref for prefixes and v, m, V_root at the root', () => {
  const v = toViewTree(sample(), { maxChars: 100 });
  assert.equal(v.m, 2);
  close(v.v, 0.6);
  close(v.vRoot, 1 - 0.36 - 0.16);
  assert.equal(v.leaves, 3);
  assert.equal(v.successes, 2);
  assert.equal(v.mixed, true);
  const a = v.nodes['q/0'];
  assert.equal(a.r, 0);
  close(a.rho, 0.3); // r = 0, q = .7: ρ = 1 − q
  close(a.vPref, 0.7);
  const d = v.nodes['q/1'];
  assert.equal(d.r, 1);
  close(d.rho, 0.4);
  assert.equal(d.vPref, undefined, 'not expanded, so no V_pref');
  assert.equal(v.nodes['q/0/1'].rho, undefined, 'leaves have no ρ');
  assert.equal(v.nodes['q/0/1'].origin, 'continuation');
});

test('long texts are cut and say so', () => {
  const t = createTree('p', 'x'.repeat(50));
  const a = addTurn(t, 'p', { thought: 'y'.repeat(30), action: { type: 'answer', input: 'z' }, observation: '' }, { origin: 'bare' });
  endTrajectory(t, a.id, 'answer', 1);
  const v = toViewTree(t, { maxChars: 10 });
  assert.equal(v.prompt, `${'x'.repeat(10)}… [40 more characters cut]`);
  assert.equal(v.nodes['p/0'].thought, `${'y'.repeat(10)}… [20 more characters cut]`);
  assert.equal(v.nodes['p/0'].observation, undefined, 'empty observation is left out');
});
