/**
 * The contract every SuccessPredictor passes (src/predict/types.ts). Call it from a test file, once
 * per implementation:
 *
 *   import { predictorContract } from '../contracts/predictor.ts';
 *   predictorContract('my-predictor', {
 *     make: () => createMyPredictor({ seed: 0 }),   // a fresh, untrained instance; same seed every call
 *     batches: [step0Targets, step1Targets],         // ≥ 2 steps of real tree targets (samplesFromTrees)
 *   });
 *
 * What it checks:
 *  - predictions are probabilities: one finite value in [0, 1] per history, none for no history, and
 *    each depends on its own history only (a batch predicts what the histories predict one by one);
 *  - determinism under a seed: two fresh instances trained on the same batches predict the same;
 *  - it learns: training on all-success targets raises the mean prediction on those histories;
 *  - save/load round trip: a fresh instance loading a snapshot predicts exactly as the saved one, and
 *    keeps doing so after both train on the next batch (optimiser and replay state travel too);
 *  - failure as data: a snapshot that is not one throws a named error and leaves the model unchanged.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { History, SuccessPredictor, TargetSample } from '../../src/predict/types.ts';

export interface PredictorContractOptions {
  /** A fresh, untrained instance, built the same way (same seed) every call. */
  make: () => SuccessPredictor | Promise<SuccessPredictor>;
  /** At least two steps of real targets (e.g. `samplesFromTrees` of rollout trees). */
  batches: ReadonlyArray<readonly TargetSample[]>;
}

const close = (a: readonly number[], b: readonly number[], tol: number, what: string) => {
  assert.equal(a.length, b.length, what);
  a.forEach((x, i) => assert.ok(Math.abs(x - b[i]!) <= tol, `${what} [${i}]: ${x} vs ${b[i]}`));
};

export function predictorContract(name: string, options: PredictorContractOptions): void {
  const histories = (batch: readonly TargetSample[]): History[] => batch.map((s) => s.history);
  const all = () => histories(options.batches.flat());
  const ready = async (p: SuccessPredictor, hs: readonly History[]) => {
    await p.prepare?.(hs);
    return p;
  };
  const train = async (p: SuccessPredictor, batch: readonly TargetSample[]) => {
    await ready(p, histories(batch));
    const metrics = p.train(batch);
    for (const [k, v] of Object.entries(metrics)) assert.ok(Number.isFinite(v), `${name}: train metric ${k} = ${v}`);
  };

  describe(`predictor contract: ${name}`, () => {
    test('predictions are probabilities, one per history, each from its own history only', async () => {
      assert.ok(options.batches.length >= 2 && options.batches.every((b) => b.length > 0), 'the contract needs two non-empty batches');
      const p = await options.make();
      const hs = all();
      for (const stage of ['untrained', 'trained']) {
        await ready(p, hs);
        const out = p.predict(hs);
        assert.equal(out.length, hs.length);
        assert.ok(
          out.every((v) => Number.isFinite(v) && v >= 0 && v <= 1),
          `${name} ${stage}: ${out.find((v) => !(v >= 0 && v <= 1))}`,
        );
        assert.deepEqual(p.predict([]), []);
        const some = hs.filter((_, i) => i % 7 === 0);
        close(
          some.map((h) => p.predict([h])[0]!),
          p.predict(some),
          1e-5,
          `${name} ${stage}: batch vs one by one`,
        );
        if (stage === 'untrained') await train(p, options.batches[0]!);
      }
    });

    test('determinism under a seed: two fresh instances trained alike predict alike', async () => {
      const [a, b] = [await options.make(), await options.make()];
      for (const batch of options.batches) {
        await train(a, batch);
        await train(b, batch);
      }
      const hs = all();
      await ready(a, hs);
      await ready(b, hs);
      close(b.predict(hs), a.predict(hs), 1e-9, name);
    });

    test('it learns: training on all-success targets raises the predictions on those histories', async () => {
      const p = await options.make();
      const batch = options.batches[0]!.map((s) => ({ ...s, target: 1 }));
      const hs = histories(batch);
      await ready(p, hs);
      const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
      const before = mean(p.predict(hs));
      for (let i = 0; i < 5; i++) await train(p, batch);
      const after = mean(p.predict(hs));
      assert.ok(after > before + 1e-3, `${name}: mean prediction ${before} → ${after}`);
    });

    test('save/load round trip: a fresh instance predicts and keeps training exactly like the saved one', async () => {
      const [a, b] = [await options.make(), await options.make()];
      await train(a, options.batches[0]!);
      const snapshot = a.save();
      b.load(snapshot);
      const hs = all();
      await ready(a, hs);
      await ready(b, hs);
      const saved = a.predict(hs);
      assert.deepEqual(b.predict(hs), saved, `${name}: predictions after load`);
      for (const batch of options.batches.slice(1)) {
        await train(a, batch);
        await train(b, batch);
      }
      close(b.predict(hs), a.predict(hs), 1e-9, `${name}: after training on from the snapshot`);
      a.load(snapshot);
      assert.deepEqual(a.predict(hs), saved, `${name}: load on the same instance restores it`);
    });

    test('failure as data: an unusable snapshot throws a named error and leaves the model unchanged', async () => {
      const p = await options.make();
      await train(p, options.batches[0]!);
      const hs = all();
      await ready(p, hs);
      const before = p.predict(hs);
      for (const junk of [new Uint8Array(0), new TextEncoder().encode('{"kind":"nothing"}'), p.save().subarray(0, 40)]) {
        assert.throws(
          () => p.load(junk),
          (e: unknown) => e instanceof Error && e.name !== 'Error' && e.message.length > 0,
        );
        assert.deepEqual(p.predict(hs), before, `${name}: a failed load changed the model`);
      }
    });
  });
}
