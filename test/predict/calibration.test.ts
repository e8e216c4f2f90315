import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  auroc,
  brier,
  evaluateThenTrain,
  GlobalRatePredictor,
  logLoss,
  qualityOf,
  reliability,
  samplesFromTrees,
  splitQuality,
  UnknownPromptError,
  type Outcome,
} from '../../src/predict/index.ts';
import { addTurn, createTree, endTrajectory } from '../../src/tree/index.ts';
import { prompt, turn } from './helpers.ts';

const close = (a: number, b: number, tol = 1e-12) => assert.ok(Math.abs(a - b) <= tol, `${a} ≠ ${b}`);
const o = (p: number, out: number, w = 1): Outcome => ({ p, o: out, w });

test('Brier and log loss match hand-computed values', () => {
  const xs = [o(0.9, 1), o(0.2, 0), o(0.6, 0), o(0.5, 1, 2)];
  // (0.01 + 0.04 + 0.36 + 2·0.25) / 5
  close(brier(xs), 0.91 / 5);
  close(logLoss(xs), -(Math.log(0.9) + Math.log(0.8) + Math.log(0.4) + 2 * Math.log(0.5)) / 5);
  assert.ok(Number.isFinite(logLoss([o(0, 1)])), 'p = 0 is clipped');
});

test('AUROC counts ties as one half and uses weights', () => {
  // positives at 0.8, 0.5; negatives at 0.5, 0.2: pairs (0.8>0.5) (0.8>0.2) (0.5=0.5 → ½) (0.5>0.2) = 3.5/4
  close(auroc([o(0.8, 1), o(0.5, 1), o(0.5, 0), o(0.2, 0)]), 3.5 / 4);
  close(auroc([o(0.3, 1), o(0.3, 0)]), 0.5);
  close(auroc([o(0.1, 1), o(0.9, 0)]), 0);
  // a weight-2 outcome counts as two copies
  close(auroc([o(0.8, 1), o(0.5, 0, 2), o(0.9, 0)]), auroc([o(0.8, 1), o(0.5, 0), o(0.5, 0), o(0.9, 0)]));
  close(auroc([o(0.8, 1), o(0.5, 0, 2), o(0.9, 0)]), 2 / 3);
  assert.ok(Number.isNaN(auroc([o(0.4, 1), o(0.6, 1)])), 'undefined without both classes');
});

test('reliability table: 10 bins of mean prediction, observed rate and weight', () => {
  const bins = reliability([o(0.05, 0), o(0.05, 1, 3), o(0.95, 1), o(1, 1), o(0.55, 0)]);
  assert.equal(bins.length, 10);
  close(bins[0].meanPredicted, 0.05);
  close(bins[0].observedRate, 0.75);
  assert.equal(bins[0].count, 4);
  assert.equal(bins[9].count, 2, 'p = 1 falls in the last bin');
  close(bins[9].meanPredicted, 0.975);
  assert.equal(bins[5].observedRate, 0);
  assert.ok(Number.isNaN(bins[3].meanPredicted));
});

/** q1 ─┬─ a ─┬─ a1 (r=1)
 *      │     └─ a' ─ a'1 (r=0)
 *      └─ b ── b1 (r=0) */
function sampleTree() {
  const t = createTree('q1', 'Who?');
  const a = addTurn(t, 'q1', turn('search', 'a', 'obs a'), { origin: 'bare' });
  const b = addTurn(t, 'q1', turn('search', 'b', 'obs b'), { origin: 'bare' });
  const a1 = addTurn(t, a.id, turn('answer', 'x', ''), { origin: 'bare' });
  const b1 = addTurn(t, b.id, turn('answer', 'y', ''), { origin: 'bare' });
  const a2 = addTurn(t, a.id, turn('search', "a'", ''), { origin: 'continuation' });
  const a21 = addTurn(t, a2.id, turn('answer', 'z', ''), { origin: 'continuation' });
  endTrajectory(t, a1.id, 'answer', 1);
  endTrajectory(t, b1.id, 'answer', 0);
  endTrajectory(t, a21.id, 'answer', 0);
  return t;
}

test('samplesFromTrees: one sample per targeted node, with kind, count and prefix turns', () => {
  const samples = samplesFromTrees([sampleTree()], [prompt('q1', 'Who?')]);
  const byId = new Map(samples.map((s) => [s.nodeId, s]));
  assert.equal(samples.length, 7);
  assert.deepEqual([byId.get('q1')!.kind, byId.get('q1')!.target, byId.get('q1')!.count], ['root', 1 / 3, 3]);
  assert.deepEqual([byId.get('q1/0')!.kind, byId.get('q1/0')!.target, byId.get('q1/0')!.count], ['prefix', 0.5, 2]);
  assert.deepEqual(
    byId.get('q1/0/1')!.history.turns.map((t) => t.action.input),
    ['a', "a'"],
  );
  assert.equal(byId.get('q1/0/0')!.kind, 'leaf');
  assert.equal(samplesFromTrees([sampleTree()], new Map([['q1', prompt('q1', 'Who?')]]), { leaves: false }).length, 4);
  assert.throws(() => samplesFromTrees([sampleTree()], []), UnknownPromptError);
});

test('quality per kind treats a node of target y and count c as c weighted outcomes', () => {
  const samples = samplesFromTrees([sampleTree()], [prompt('q1', 'Who?')]);
  const preds = samples.map((s) => (s.kind === 'root' ? 0.25 : 0.6));
  const q = splitQuality(preds, samples);
  assert.equal(q.root.nodes, 1);
  assert.equal(q.root.outcomes, 3);
  close(q.root.brier, (1 * 0.75 ** 2 + 2 * 0.25 ** 2) / 3);
  // prefixes: q1/0 (0.5 of 2), q1/1 (0 of 1), q1/0/1 (0 of 1) all at 0.6
  close(q.prefix.brier, (0.4 ** 2 + 3 * 0.6 ** 2) / 4);
  close(q.prefix.observedRate, 0.25);
  close(q.prefix.auroc, 0.5, 1e-12);
  assert.equal(q.leaf.nodes, 3);
  const direct = qualityOf(
    [0.9, 0.1],
    [
      { history: { prompt: prompt('a', ''), turns: [] }, target: 1, count: 1 },
      { history: { prompt: prompt('b', ''), turns: [] }, target: 0, count: 1 },
    ],
  );
  close(direct.auroc, 1);
  close(direct.brier, 0.01);
});

test('evaluateThenTrain measures with the model from before the step, then trains', async () => {
  const g = new GlobalRatePredictor(0.5);
  const samples = samplesFromTrees([sampleTree()], [prompt('q1', 'Who?')]);
  const first = await evaluateThenTrain(g, samples);
  close(first.quality.root.brier, (0.5 ** 2 * 3) / 3, 1e-12); // prior 0.5 on 1 success + 2 failures
  close(first.training.rate, 1 / 3);
  const second = await evaluateThenTrain(g, samples);
  close(second.quality.root.meanPredicted, 1 / 3);
});
