import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { fitHorizon, warmStart } from '../../src/tinylm/warm-start.ts';
import { initJax } from '../../src/util/jax.ts';
import { fixture } from './fixtures.ts';

before(async () => {
  await initJax();
});

const tiny = () => ({
  env: fixture().env,
  shape: { dim: 32, layers: 1, heads: 2, ffn: 64, context: 512, ropeBase: 10000, eps: 1e-5 },
  merges: 100,
  questions: 3,
  noise: 0,
  epochs: 5,
  learningRate: 0.002,
  gridTokens: 1024,
  seed: 0,
});

test('warmStart stops after maxSteps Adam steps, across epochs', async () => {
  const seen: number[] = [];
  const r = await warmStart({ ...tiny(), maxSteps: 3, onStep: ({ epoch, step }) => seen.push(epoch * 100 + step) });
  assert.equal(r.steps, 3);
  assert.equal(seen.length, 3);
  assert.ok(r.epochs >= 2, `the three steps span epochs (${seen.join(', ')})`);
});

const cosine = (peak: number, f: number) => peak * (0.1 + 0.45 * (1 + Math.cos(Math.PI * f)));

test('warmStart plans the cosine decay over horizonSteps when given, else over all epochs', async () => {
  const lrs: number[] = [];
  const r = await warmStart({ ...tiny(), maxSteps: 4, horizonSteps: 4, onStep: ({ lr }) => lrs.push(lr) });
  assert.equal(r.horizon, 4);
  assert.deepEqual(
    lrs.map((x) => +x.toPrecision(12)),
    [0, 1, 2, 3].map((s) => +cosine(0.002, s / 4).toPrecision(12)),
  );
  const plain: Array<{ lr: number; steps: number }> = [];
  const q = await warmStart({ ...tiny(), maxSteps: 3, onStep: ({ lr, steps }) => plain.push({ lr, steps }) });
  const n = plain[0]!.steps;
  assert.equal(q.horizon, 5 * n, 'the default horizon is every epoch');
  assert.deepEqual(
    plain.map((x) => +x.lr.toPrecision(12)),
    [0, 1, 2].map((s) => +cosine(0.002, s / (5 * n)).toPrecision(12)),
  );
});

test('fitHorizon fills the rest of the budget at the pace after the first (compiling) step', () => {
  // 12 steps in 30 s, the first took 8 s: 22 s / 11 steps = 2 s each; 270 s left hold 135 more.
  assert.equal(fitHorizon(12, 30, 8, 300), 147);
  assert.equal(fitHorizon(12, 30, 8, 29), 13, 'a spent budget still plans one more step');
});

test('warmStart rejects a fit-time horizon without a time budget, and a bad horizon', async () => {
  await assert.rejects(warmStart({ ...tiny(), horizonSteps: 'fit-time' }), /fit-time' needs maxSeconds/);
  await assert.rejects(warmStart({ ...tiny(), horizonSteps: 0 }), /positive integer/);
});
