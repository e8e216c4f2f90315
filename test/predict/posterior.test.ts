/**
 * The per-prompt posterior over a shared predictor (src/predict/posterior.ts) on hand-made cases: a stub
 * shared predictor with fixed μ (0.2 at every root, 0.5 at every prefix), so each value is a formula
 * worked out by hand. The contract suite runs it over the MLP in contract.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  GlobalRatePredictor, PosteriorPredictor, PredictorConfigError, SnapshotError,
  type History, type SuccessPredictor, type TargetSample,
} from '../../src/predict/index.ts';
import { fitPopulation, GRID, populationMean, uniformPopulation } from '../../src/predict/population-prior.ts';
import { decodeSnapshot, encodeSnapshot } from '../../src/predict/snapshot.ts';
import { prompt, turn } from './helpers.ts';

const root = (id: string, target = 0, count = 0): TargetSample => ({ history: { prompt: prompt(id, `q ${id}`), turns: [] }, target, count, kind: 'root' });
const prefix = (id: string, target = 0): TargetSample => ({ history: { prompt: prompt(id, `q ${id}`), turns: [turn('search', 'x', 'y')] }, target, count: 1, kind: 'prefix' });
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

test('discount λ multiplies a prompt\'s counts each time it gets new evidence', () => {
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
  assert.throws(() => new PosteriorPredictor(stub()).load(p.save()), (e: Error) => e instanceof SnapshotError && e.message.includes('global-rate'));
  assert.deepEqual(copy.predict(probe), p.predict(probe), 'a refused snapshot leaves the model unchanged');
});

test('options are checked', () => {
  assert.throws(() => new PosteriorPredictor(stub(), { strength: 0 }), (e: Error) => e instanceof PredictorConfigError && e.message.includes('strength'));
  assert.throws(() => new PosteriorPredictor(stub(), { discount: 1.5 }), (e: Error) => e instanceof PredictorConfigError && e.message.includes('discount'));
  assert.throws(() => new PosteriorPredictor(stub(), { prefixes: 'up' as 'none' }), (e: Error) => e instanceof PredictorConfigError && e.message.includes('prefixes'));
});

test('population prior: EM recovers a two-point population, and reads few outcomes against it', () => {
  // 40 prompts at the grid's top point, 40 at its middle, 200 outcomes each at their exact rates.
  const top = GRID.length - 1;
  const mid = (GRID.length - 1) / 2;
  const evidence = [...Array.from({ length: 40 }, () => ({ s: 200 * GRID[top]!, n: 200 })), ...Array.from({ length: 40 }, () => ({ s: 100, n: 200 }))];
  const g = fitPopulation(evidence, uniformPopulation(), 200);
  close(g.reduce((a, x) => a + x, 0), 1, 'g sums to 1');
  assert.ok(g[top]! + g[top - 1]! > 0.45 && g[mid]! + g[mid - 1]! + g[mid + 1]! > 0.45, `mass at the two rates: ${g[top]}, ${g[mid]}`);
  // By hand, on g = ½ at p = ½ and ½ at p = σ(6): after 3 successes, E[p] = Σ g p⁴ / Σ g p³.
  const two = new Float64Array(GRID.length);
  two[mid] = 0.5;
  two[top] = 0.5;
  const p = GRID[top]!;
  close(populationMean(two, 3, 0), (0.5 ** 4 + p ** 4) / (0.5 ** 3 + p ** 3), '3 for 3 on the two-point population');
  close(populationMean(two, 0, 1), (0.5 * 0.5 + p * (1 - p)) / (0.5 + (1 - p)), 'one failure');
  // The flat Beta(1, 1) says 4/5 after 3 for 3; the population says "likely solved".
  assert.ok(populationMean(two, 3, 0) > 0.9);
});

test('population: true: a seen root gets E[p] under g(p)·p^S(1 − p)^(N − S); unseen prompts keep μ; the snapshot carries g', () => {
  const p = new PosteriorPredictor(stub(), { strength: 4, population: true });
  const all = [...Array.from({ length: 30 }, (_, i) => root(`solved${i}`, 1, 12)), ...Array.from({ length: 30 }, (_, i) => root(`open${i}`, 0.5, 12))];
  p.train(all);
  p.train([root('new', 1, 3)]);
  const [solved, fresh, unseen] = p.predict([h(root('solved0')), h(root('new')), h(root('never'))]);
  assert.equal(unseen, 0.2, 'an unseen prompt keeps the shared prediction');
  const flat = (0.8 + 3) / (4 + 3);
  assert.ok(fresh! > 0.9, `3 for 3 among many solved prompts reads as nearly solved: ${fresh} (the Beta around μ: ${flat})`);
  close(fresh!, populationMean(fitPopulation([...all.map((r) => ({ s: r.target * r.count, n: r.count })), { s: 3, n: 3 }], fitPopulation(all.map((r) => ({ s: r.target * r.count, n: r.count })), uniformPopulation())), 3, 0), 'E[p] under the population fitted after each step, warm-started');
  assert.ok(solved! > fresh!, 'more agreeing outcomes, surer');
  const copy = new PosteriorPredictor(stub());
  copy.load(p.save());
  assert.deepEqual(copy.predict([h(root('solved0')), h(root('new'))]), p.predict([h(root('solved0')), h(root('new'))]));
  // Off (the default), the same evidence gives the flat Beta mean.
  const off = new PosteriorPredictor(stub(), { strength: 4 });
  off.train([root('new', 1, 3)]);
  close(off.predict([h(root('new'))])[0]!, flat, 'flat Beta');
});

test('a damaged posterior snapshot (a hostile checkpoint file) is refused by name and leaves the model unchanged', () => {
  const p = new PosteriorPredictor(new GlobalRatePredictor(), { population: true });
  p.train([root('a', 0.5, 4)]);
  const probe = [h(root('a')), h(root('b'))];
  const before = p.predict(probe);
  const { header, blobs } = decodeSnapshot(p.save());
  const damaged: Array<[string, Record<string, unknown>, RegExp]> = [
    ['no evidence list', { ...header, evidence: {} }, /no evidence list/],
    ['successes above outcomes', { ...header, evidence: [['a', 5, 4]] }, /evidence row 0/],
    ['a non-finite count', { ...header, evidence: [['a', 1, null]] }, /evidence row 0/],
    ['a base length past its blob', { ...header, baseBytes: 1e9 }, /baseBytes/],
    ['a population of the wrong size', { ...header, population: [1, 2] }, /population prior/],
    ['no options', { ...header, options: 'x' }, /no options/],
  ];
  for (const [what, bad, message] of damaged) {
    assert.throws(() => p.load(encodeSnapshot(bad, blobs)), (e: Error) => e instanceof SnapshotError && message.test(e.message), what);
    assert.deepEqual(p.predict(probe), before, `${what}: unchanged`);
  }
});

test("evidence 'first-turn': a rollout past its first turn counts as the shared prediction after it; one that ended there keeps its outcome", () => {
  const ft = new PosteriorPredictor(stub(), { strength: 4, evidence: 'first-turn' });
  const base = stub();
  const outcomes = new PosteriorPredictor(base, { strength: 4 });
  // Prompt a: 4 rollouts, 3 successes; two went past turn 1 (both succeeded, μ = 0.5 there), two ended at it (one success).
  const step = [root('a', 0.75, 4), { ...prefix('a', 1), count: 1 }, { ...prefix('a', 1), count: 1 }];
  ft.train(step);
  outcomes.train(step);
  // S = 0.5 + 0.5 (the predictions) + (3 − 2) (the outcomes of the rollouts that ended at turn 1) = 2, N = 4.
  assert.deepEqual(ft.evidenceOf('a'), { s: 2, n: 4 });
  close(ft.predict([h(root('a'))])[0]!, (0.8 + 2) / 8, 'first-turn');
  close(outcomes.predict([h(root('a'))])[0]!, (0.8 + 3) / 8, 'outcomes (the default)');
  assert.throws(() => new PosteriorPredictor(stub(), { evidence: 'all' as 'outcomes' }), (e: Error) => e instanceof PredictorConfigError && e.message.includes('evidence'));
});
