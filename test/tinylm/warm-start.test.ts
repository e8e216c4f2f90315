import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { warmStart } from '../../src/tinylm/warm-start.ts';
import { initJax } from '../../src/util/jax.ts';
import { fixture } from './fixtures.ts';

before(async () => {
  await initJax();
});

test('warmStart stops after maxSteps Adam steps, across epochs', async () => {
  const { env } = fixture();
  const seen: number[] = [];
  const r = await warmStart({
    env,
    shape: { dim: 32, layers: 1, heads: 2, ffn: 64, context: 512, ropeBase: 10000, eps: 1e-5 },
    merges: 100,
    questions: 3,
    noise: 0,
    epochs: 5,
    learningRate: 0.002,
    gridTokens: 1024,
    maxSteps: 3,
    seed: 0,
    onStep: ({ epoch, step }) => seen.push(epoch * 100 + step),
  });
  assert.equal(r.steps, 3);
  assert.equal(seen.length, 3);
  assert.ok(r.epochs >= 2, `the three steps span epochs (${seen.join(", ")})`);
});
