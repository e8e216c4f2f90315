import assert from 'node:assert/strict';
import { test } from 'node:test';
import { multiplier, paired } from './elasticity.ts';

test('multiplier: a Δ of one doubling’s slope is worth 2×, of minus one ½×; a flat slope is unbounded', () => {
  const slopes = [0.04, 0.05, 0.06, 0.05, 0.05];
  assert.ok(Math.abs(multiplier(slopes, [0.05, 0.05, 0.05]).c.mean - 2) < 1e-12);
  assert.ok(Math.abs(multiplier(slopes, [-0.05, -0.05]).c.mean - 0.5) < 1e-12);
  const tie = multiplier(slopes, [-0.02, 0.02, 0, 0.01, -0.01]);
  assert.ok(tie.c.lo! < 1 && tie.c.hi! > 1, 'a tie’s interval holds 1×');
  const flat = multiplier([0.01, -0.01, 0.02, -0.02], [0.01, 0.0]);
  assert.equal(flat.c.lo, null);
  assert.equal(flat.c.hi, null);
  assert.deepEqual(
    paired(
      new Map([
        [1, 0.5],
        [2, 0.6],
        [3, 0.7],
      ]),
      new Map([
        [1, 0.4],
        [3, 0.7],
      ]),
    ),
    [0.09999999999999998, 0],
  );
});
