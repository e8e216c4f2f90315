import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  createMlpPredictor,
  createFeatures,
  GlobalRatePredictor,
  PredictorConfigError,
  qualityOf,
  SnapshotError,
  type TargetSample,
} from '../../src/predict/index.ts';
import { createRng } from '../../src/util/rng.ts';
import { histories, plantedSample } from './helpers.ts';

const data = (seed: number, n: number, prefix: string): TargetSample[] => {
  const rng = createRng(seed);
  return Array.from({ length: n }, (_, i) => plantedSample(rng, `${prefix}${i}`));
};

test('cold start: every history gets the prior until the first training step', async () => {
  const mlp = await createMlpPredictor({ prior: 0.3 });
  const hs = histories(data(1, 20, 'c'));
  assert.deepEqual(
    mlp.predict(hs),
    hs.map(() => 0.3),
  );
  mlp.train(data(2, 10, 'd'));
  const after = mlp.predict(hs);
  assert.ok(after.some((p) => p !== 0.3));
});

test('learns a planted rule (success iff an observation says "zebra") on unseen prompts', async () => {
  const mlp = await createMlpPredictor({ seed: 3, hidden: [32, 16] });
  for (let step = 0; step < 6; step++) mlp.train(data(100 + step, 400, `train${step}-`));
  const test = data(999, 400, 'heldout-');
  const q = qualityOf(mlp.predict(histories(test)), test);
  const baseline = new GlobalRatePredictor();
  baseline.train(test.map((s) => ({ ...s, kind: 'root' as const })));
  const qb = qualityOf(baseline.predict(histories(test)), test);
  assert.ok(q.auroc > 0.95, `AUROC ${q.auroc}`);
  assert.ok(q.brier < 0.5 * qb.brier, `Brier ${q.brier} vs global-rate ${qb.brier}`);
});

test('save/load: the loaded model predicts identically and keeps training identically', async () => {
  const a = await createMlpPredictor({ seed: 5, hidden: [16] });
  a.train(data(1, 150, 'x'));
  a.train(data(2, 150, 'y'));
  const snap = a.save();
  const b = await createMlpPredictor({ seed: 99, hidden: [8, 8] }); // options are replaced by the snapshot's
  b.load(snap);
  const probe = histories(data(3, 80, 'z'));
  assert.deepEqual(b.predict(probe), a.predict(probe));
  assert.deepEqual(b.state, a.state);
  const next = data(4, 150, 'w');
  const ra = a.train(next);
  const rb = b.train(next);
  assert.deepEqual(rb, ra);
  assert.deepEqual(b.predict(probe), a.predict(probe));
  assert.notDeepEqual(a.predict(probe), (await createMlpPredictor({ seed: 5, hidden: [16] })).predict(probe));
});

test('load refuses a snapshot made with other features; bad options fail with the field name', async () => {
  const a = await createMlpPredictor({ hidden: [8] });
  a.train(data(1, 20, 'x'));
  const other = await createMlpPredictor({ features: createFeatures({ hashed: { hashBits: 8 } }) });
  assert.throws(() => other.load(a.save()), SnapshotError);
  assert.throws(() => other.load(new Uint8Array([1, 2, 3])), SnapshotError);
  await assert.rejects(createMlpPredictor({ hidden: [0] }), (e: Error) => e instanceof PredictorConfigError && e.message.includes('hidden'));
  await assert.rejects(createMlpPredictor({ prior: 1 }), (e: Error) => e instanceof PredictorConfigError && e.message.includes('prior'));
});

test('replay window keeps only the last replaySteps steps', async () => {
  const mlp = await createMlpPredictor({ replaySteps: 2, hidden: [8] });
  mlp.train(data(1, 30, 'a'));
  mlp.train(data(2, 40, 'b'));
  mlp.train(data(3, 50, 'c'));
  assert.equal(mlp.state.replaySamples, 90);
  assert.equal(mlp.state.steps, 3);
});

test('snapshotReplay: false gives a smaller snapshot that still predicts identically', async () => {
  const full = await createMlpPredictor({ seed: 1, hidden: [8] });
  const lean = await createMlpPredictor({ seed: 1, hidden: [8], snapshotReplay: false });
  for (const p of [full, lean]) p.train(data(1, 1000, 'x'));
  const a = full.save();
  const b = lean.save();
  assert.ok(b.length < a.length / 2, `${b.length} vs ${a.length} bytes`);
  const restored = await createMlpPredictor({ hidden: [8] });
  restored.load(b);
  const probe = histories(data(2, 50, 'y'));
  assert.deepEqual(restored.predict(probe), lean.predict(probe));
  assert.equal(restored.state.replaySamples, 0);
});
