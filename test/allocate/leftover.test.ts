import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { adaptiveTopUp, uniformTopUp, mixedChance } from '../../src/allocate/index.ts';

/** Best Σ V_root(v_i, m_i + Δ_i) over every way to hand out L extra rollouts to prompts with m_i ≥ 2. */
function bruteForce(v: number[], m: number[], L: number, mMax: number): number {
  const open = m.map((mi) => mi >= 2 && mi < mMax);
  let best = -Infinity;
  const rec = (i: number, left: number, acc: number) => {
    if (i === v.length) {
      if (left === 0 || open.every((o, j) => !o || m[j] >= mMax)) best = Math.max(best, acc);
      return;
    }
    const cap = open[i] ? Math.min(left, mMax - m[i]) : 0;
    for (let d = 0; d <= cap; d++) rec(i + 1, left - d, acc + mixedChance(v[i], m[i] + d));
  };
  rec(0, L, 0);
  return best;
}

const value = (v: number[], m: number[], d: number[]) => v.reduce((s, vi, i) => s + mixedChance(vi, m[i] + d[i]), 0);

test('adaptive top-up is optimal among top-ups of selected prompts (brute force)', () => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.constantFrom(0, 2, 3, 4)), { minLength: 1, maxLength: 5 }),
      fc.nat(6),
      (items, L) => {
        const v = items.map((x) => x[0]);
        const m: number[] = items.map((x) => x[1]);
        const d = adaptiveTopUp(v, m, L, 6);
        const spent = d.reduce((a, b) => a + b, 0);
        const room = m.reduce((s, mi) => s + (mi >= 2 ? 6 - mi : 0), 0);
        assert.equal(spent, Math.min(L, room), 'spends all it can');
        d.forEach((di, i) => assert.ok(di === 0 || m[i] >= 2, 'never tops up an unselected prompt'));
        assert.ok(Math.abs(value(v, m, d) - bruteForce(v, m, Math.min(L, room), 6)) < 1e-12);
      },
    ),
    { numRuns: 300 },
  );
});

test('uniform top-up levels the group sizes', () => {
  assert.deepEqual(uniformTopUp([2, 4, 0, 3], 4, 16), [3, 0, 0, 1]);
  assert.deepEqual(uniformTopUp([2, 2], 10, 4), [2, 2], 'bounded by m_max');
});
