import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tree } from '../../src/util/jax.ts';
import { initParams, lossAndGrad, toParams, type MlpShape } from '../../src/predict/mlp-network.ts';
import { initJax } from '../../src/util/jax.ts';
import { createRng } from '../../src/util/rng.ts';

test('network gradients match central finite differences', async () => {
  await initJax();
  const shape: MlpShape = { input: 6, hidden: [5, 4] };
  const rng = createRng(11);
  const flat = initParams(shape, 0.3, rng);
  // The output layer starts at zero; give it weights so every layer's gradient is non-trivial.
  for (let i = 0; i < flat[4].length; i++) flat[4][i] = 2 * rng.next() - 1;
  const n = 7;
  const x = Float32Array.from({ length: n * shape.input }, () => 2 * rng.next() - 1);
  const y = Float32Array.from({ length: n }, () => rng.next());
  const w = Float32Array.from({ length: n }, () => rng.next());
  const wsum = w.reduce((a, b) => a + b, 0);
  for (let i = 0; i < n; i++) w[i] /= wsum;
  const l2 = 0.01;
  const at = (f: Float32Array[]) => {
    const p = toParams(f, shape);
    const r = lossAndGrad(p, x, y, w, l2);
    tree.dispose(p);
    return r;
  };
  const { value, grad } = at(flat);
  assert.ok(value > 0);
  const big = grad.flatMap((g) => Array.from(g)).filter((g) => Math.abs(g) > 0.005).length;
  assert.ok(big >= 30, `only ${big} gradient entries above 0.005: the check would be vacuous`);
  const eps = 1e-3;
  let checked = 0;
  for (let b = 0; b < flat.length; b++) {
    for (let i = 0; i < flat[b].length; i++) {
      const plus = flat.map((a) => a.slice());
      const minus = flat.map((a) => a.slice());
      plus[b][i] += eps;
      minus[b][i] -= eps;
      const numeric = (at(plus).value - at(minus).value) / (2 * eps);
      const analytic = grad[b][i];
      assert.ok(Math.abs(numeric - analytic) <= 3e-4 + 0.02 * Math.abs(numeric), `param block ${b} index ${i}: analytic ${analytic}, numeric ${numeric}`);
      checked++;
    }
  }
  assert.equal(checked, 6 * 5 + 5 + 5 * 4 + 4 + 4 + 1);
});
