import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BetaBernoulliPredictor, GlobalRatePredictor, SnapshotError, type TargetSample } from '../../src/predict/index.ts';
import { decodeSnapshot, encodeSnapshot } from '../../src/predict/snapshot.ts';
import { prompt, turn } from './helpers.ts';

const root = (id: string, target: number, count: number): TargetSample => ({
  history: { prompt: prompt(id, `q ${id}`), turns: [] },
  target,
  count,
  kind: 'root',
});
const prefix = (id: string, target: number): TargetSample => ({
  history: { prompt: prompt(id, `q ${id}`), turns: [turn('search', 'x', 'y')] },
  target,
  count: 1,
  kind: 'prefix',
});

test('Beta-Bernoulli: posterior mean per prompt from roots; prefixes fall back to it; unseen = prior', () => {
  const bb = new BetaBernoulliPredictor({ alpha0: 1, beta0: 1 });
  bb.train([root('a', 0.75, 4), root('b', 0, 2), prefix('a', 0)]);
  // a: Beta(1 + 3, 1 + 1) → 4/6; b: Beta(1, 3) → 1/4
  assert.deepEqual(bb.predict([root('a', 0, 0).history, prefix('a', 0).history, root('b', 0, 0).history, root('c', 0, 0).history]), [4 / 6, 4 / 6, 1 / 4, 0.5]);
  bb.train([root('a', 1, 2)]);
  assert.equal(bb.predict([root('a', 0, 0).history])[0], 6 / 8);
  const copy = new BetaBernoulliPredictor();
  copy.load(bb.save());
  assert.deepEqual(copy.predict([root('a', 0, 0).history, root('b', 0, 0).history]), bb.predict([root('a', 0, 0).history, root('b', 0, 0).history]));
});

test('Beta-Bernoulli discount fades old evidence toward the prior', () => {
  const bb = new BetaBernoulliPredictor({ discount: 0.5 });
  bb.train([root('a', 1, 4)]); // a = 0.5·1 + 0.5·1 + 4 = 5, b = 1
  bb.train([root('a', 0, 2)]); // a = 0.5·5 + 0.5 = 3, b = 0.5·1 + 0.5 + 2 = 3
  assert.equal(bb.predict([root('a', 0, 0).history])[0], 0.5);
});

test('global rate: leaf-weighted success rate over roots, prior before data', () => {
  const g = new GlobalRatePredictor(0.3);
  assert.deepEqual(g.predict([root('a', 0, 0).history]), [0.3]);
  g.train([root('a', 0.5, 4), root('b', 1, 2), prefix('a', 1)]);
  assert.deepEqual(g.predict([root('z', 0, 0).history, prefix('q', 0).history]), [4 / 6, 4 / 6]);
  const copy = new GlobalRatePredictor();
  copy.load(g.save());
  assert.deepEqual(copy.predict([root('z', 0, 0).history]), [4 / 6]);
  assert.throws(() => copy.load(new BetaBernoulliPredictor().save()), SnapshotError);
});

test('Beta-Bernoulli: a damaged snapshot (a hostile checkpoint file) is refused by name and leaves the model unchanged', () => {
  const bb = new BetaBernoulliPredictor();
  bb.train([root('a', 0.5, 4)]);
  const before = bb.predict([root('a', 0, 0).history]);
  const good = decodeSnapshot(bb.save()).header;
  const damaged: Array<[string, Record<string, unknown>, RegExp]> = [
    ['no posterior list', { ...good, posterior: 'x' }, /no posterior list/],
    ['a row with a negative α', { ...good, posterior: [['a', -1, 2]] }, /posterior row 0/],
    ['a row with a number for an id', { ...good, posterior: [[7, 1, 2]] }, /posterior row 0/],
    ['a NaN-making discount', { ...good, options: { alpha0: 1, beta0: 1, discount: 3 } }, /discount in \(0, 1\]/],
    ['no options', { ...good, options: undefined }, /options/],
  ];
  for (const [what, header, message] of damaged) {
    assert.throws(
      () => bb.load(encodeSnapshot(header)),
      (e: Error) => e instanceof SnapshotError && message.test(e.message),
      what,
    );
    assert.deepEqual(bb.predict([root('a', 0, 0).history]), before, `${what}: unchanged`);
  }
});
