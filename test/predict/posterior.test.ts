/**
 * The per-prompt posterior over a shared predictor (src/predict/posterior.ts) on hand-made cases: a stub
 * shared predictor with fixed μ (0.2 at every root, 0.5 at every prefix), so each value is a formula
 * worked out by hand. The contract suite runs it over the MLP in contract.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  GlobalRatePredictor,
  PosteriorPredictor,
  PredictorConfigError,
  SnapshotError,
  type History,
  type SuccessPredictor,
  type TargetSample,
} from '../../src/predict/index.ts';
import { decodeSnapshot, encodeSnapshot } from '../../src/predict/snapshot.ts';
import { prompt, turn } from './helpers.ts';

const root = (id: string, target = 0, count = 0): TargetSample => ({ history: { prompt: prompt(id, `q ${id}`), turns: [] }, target, count, kind: 'root' });
const prefix = (id: string, target = 0): TargetSample => ({
  history: { prompt: prompt(id, `q ${id}`), turns: [turn('search', 'x', 'y')] },
  target,
  count: 1,
  kind: 'prefix',
});
const h = (s: TargetSample): History => s.history;

/** μ = 0.2 at roots, 0.5 at prefixes; counts the samples it was trained on. */
function stub(): SuccessPredictor & { trainedOn: number } {
  return {
    name: 'stub',
    trainedOn: 0,
    predict: (hs) => hs.map((x) => (x.turns.length === 0 ? 0.2 : 0.5)),
    train(samples) {
      this.trainedOn += samples.length;
      return { loss: 0 };
    },
    save: () => new Uint8Array(),
    load: () => {},
  };
}

const close = (a: number, b: number, what: string) => assert.ok(Math.abs(a - b) < 1e-12, `${what}: ${a} vs ${b}`);
/** σ(logit a + logit b − logit c), written in odds. */
const shifted = (a: number, b: number, c: number) => {
  const odds = (a / (1 - a)) * (b / (1 - b)) * ((1 - c) / c);
  return odds / (1 + odds);
};

test('prior only: before any evidence every history gets the shared prediction μ exactly', () => {
  const p = new PosteriorPredictor(stub(), { strength: 4 });
  assert.deepEqual(p.predict([h(root('a')), h(prefix('a'))]), [0.2, 0.5]);
});

test('after evidence: Ṽ(root) = (k₀·μ + S) / (k₀ + N); an unseen prompt keeps μ; the shared model trains on every sample', () => {
  const base = stub();
  const p = new PosteriorPredictor(base, { strength: 4 });
  p.train([root('a', 0.75, 4), prefix('a', 1), root('b', 0, 2)]);
  assert.equal(base.trainedOn, 3);
  assert.deepEqual(p.evidenceOf('a'), { s: 3, n: 4 });
  const [a, b, c] = p.predict([h(root('a')), h(root('b')), h(root('c'))]);
  close(a!, (4 * 0.2 + 3) / (4 + 4), 'a'); // 0.475
  close(b!, (4 * 0.2 + 0) / (4 + 2), 'b');
  assert.equal(c, 0.2);
  p.train([root('a', 1, 2)]); // S = 5, N = 6
  close(p.predict([h(root('a'))])[0]!, (0.8 + 5) / 10, 'a after a second step');
});

test("discount λ multiplies a prompt's counts each time it gets new evidence", () => {
  const p = new PosteriorPredictor(stub(), { strength: 4, discount: 0.5 });
  p.train([root('a', 1, 2)]); // S = 2, N = 2
  p.train([root('b', 1, 8)]); // a untouched: no new evidence for it
  p.train([root('a', 0, 2)]); // S = 0.5·2 + 0 = 1, N = 0.5·2 + 2 = 3
  assert.deepEqual(p.evidenceOf('a'), { s: 1, n: 3 });
  close(p.predict([h(root('a'))])[0]!, (0.8 + 1) / 7, 'a');
});

test("prefixes 'shift': the shared prediction moved by the root's residual log-odds; 'none': unchanged", () => {
  const shift = new PosteriorPredictor(stub(), { strength: 4, prefixes: 'shift' });
  const none = new PosteriorPredictor(stub(), { strength: 4 }); // the default
  for (const p of [shift, none]) p.train([root('a', 0.75, 4)]);
  const vRoot = 0.475;
  const [pa, pb] = shift.predict([h(prefix('a')), h(prefix('b'))]);
  close(pa!, shifted(0.5, vRoot, 0.2), 'shifted prefix of a'); // ≈ 0.7835
  assert.equal(pb, 0.5, 'a prompt without evidence keeps μ at its prefixes');
  assert.deepEqual(none.predict([h(prefix('a')), h(prefix('b'))]), [0.5, 0.5]);
  // The root itself is the same under both rules.
  close(none.predict([h(root('a'))])[0]!, vRoot, 'root under none');
  // A prefix predicts the same alone as in a batch with its root.
  close(shift.predict([h(prefix('a'))])[0]!, shift.predict([h(root('a')), h(prefix('a'))])[1]!, 'batch vs alone');
});

test('snapshot round trip: evidence, options and the shared predictor travel; wrong snapshots are named errors', () => {
  const p = new PosteriorPredictor(new GlobalRatePredictor(), { strength: 3, discount: 0.9, prefixes: 'shift' });
  p.train([root('a', 0.5, 4), root('b', 1, 1), prefix('a', 1)]);
  p.train([root('a', 0.25, 4)]);
  const copy = new PosteriorPredictor(new GlobalRatePredictor(), {}); // options come from the snapshot
  copy.load(p.save());
  const probe = [h(root('a')), h(root('b')), h(root('c')), h(prefix('a'))];
  assert.deepEqual(copy.predict(probe), p.predict(probe));
  assert.deepEqual(copy.evidenceOf('a'), p.evidenceOf('a'));
  p.train([root('a', 1, 2)]);
  copy.train([root('a', 1, 2)]);
  assert.deepEqual(copy.predict(probe), p.predict(probe));
  assert.throws(() => copy.load(new GlobalRatePredictor().save()), SnapshotError);
  assert.throws(
    () => new PosteriorPredictor(stub()).load(p.save()),
    (e: Error) => e instanceof SnapshotError && e.message.includes('global-rate'),
  );
  assert.deepEqual(copy.predict(probe), p.predict(probe), 'a refused snapshot leaves the model unchanged');
});

test('options are checked', () => {
  assert.throws(
    () => new PosteriorPredictor(stub(), { strength: 0 }),
    (e: Error) => e instanceof PredictorConfigError && e.message.includes('strength'),
  );
  assert.throws(
    () => new PosteriorPredictor(stub(), { discount: 1.5 }),
    (e: Error) => e instanceof PredictorConfigError && e.message.includes('discount'),
  );
  assert.throws(
    () => new PosteriorPredictor(stub(), { prefixes: 'up' as 'none' }),
    (e: Error) => e instanceof PredictorConfigError && e.message.includes('prefixes'),
  );
});

test('a damaged posterior snapshot (a hostile checkpoint file) is refused by name and leaves the model unchanged', () => {
  const p = new PosteriorPredictor(new GlobalRatePredictor(), { discount: 0.9 });
  p.train([root('a', 0.5, 4)]);
  const probe = [h(root('a')), h(root('b'))];
  const before = p.predict(probe);
  const { header, blobs } = decodeSnapshot(p.save());
  const damaged: Array<[string, Record<string, unknown>, RegExp]> = [
    ['no evidence list', { ...header, evidence: {} }, /no evidence list/],
    ['successes above outcomes', { ...header, evidence: [['a', 5, 4]] }, /evidence row 0/],
    ['a non-finite count', { ...header, evidence: [['a', 1, null]] }, /evidence row 0/],
    ['a base length past its blob', { ...header, baseBytes: 1e9 }, /baseBytes/],
    ['no options', { ...header, options: 'x' }, /no options/],
  ];
  for (const [what, bad, message] of damaged) {
    assert.throws(
      () => p.load(encodeSnapshot(bad, blobs)),
      (e: Error) => e instanceof SnapshotError && message.test(e.message),
      what,
    );
    assert.deepEqual(p.predict(probe), before, `${what}: unchanged`);
  }
});
