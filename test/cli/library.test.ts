import { test } from 'node:test';
import assert from 'node:assert/strict';
import { allocate, advantage } from '../../src/index.ts';

test('the README library example runs and gives the optimum', () => {
  const { m } = allocate.solveRoots({ v: [0.1, 0.5, 0.9], budget: 8, min: 2, max: 64 });
  assert.equal(
    m.reduce((a, b) => a + b, 0),
    8,
  );
  assert.ok(m[1] >= m[0] && m[1] >= m[2], 'the prompt at v = 0.5 gets the most rollouts');
  const { k } = allocate.solvePrefixes(
    [
      { id: 'a', q: 0.3, r: 1 },
      { id: 'b', q: 0.9, r: 1 },
    ],
    3,
  );
  // ρ_a = 0.3, ρ_b = 0.9: gains 0.7, 0.21 (a) beat 0.1 (b) until a's third (0.063): K = (2, 1).
  assert.deepEqual([...k], [2, 1]);
  assert.equal(advantage.createEstimator('trace').name, 'trace');
});
