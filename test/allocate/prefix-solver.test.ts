import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { AllocationInputError, InfeasibleBudgetError } from '../../src/allocate/errors.ts';
import { flipChance, repeatChance, solvePrefixes } from '../../src/allocate/solvers/prefix-solver.ts';
import { brutePrefixes } from './brute-force.ts';

const prob = fc.oneof(fc.constantFrom(0, 1, 0.5), fc.double({ min: 0, max: 1, noNaN: true }));
const prefix = fc.record({ q: prob, r: fc.constantFrom(0, 1) });

test('greedy by marginal gain matches exhaustive search on random small cases', () => {
  fc.assert(
    fc.property(fc.array(prefix, { minLength: 1, maxLength: 4 }), fc.integer({ min: 0, max: 8 }), (ps, budget) => {
      const input = ps.map((p, i) => ({ id: `p${i}`, ...p }));
      const out = solvePrefixes(input, budget);
      assert.equal(
        out.k.reduce((a, b) => a + b, 0),
        budget,
      );
      assert.ok(out.k.every((K) => Number.isInteger(K) && K >= 0));
      const best = brutePrefixes(ps, budget);
      assert.ok(Math.abs(out.objective - best) <= 1e-12, `${out.objective} vs ${best}`);
      const recomputed = ps.reduce((s, p, i) => s + flipChance(repeatChance(p.q, p.r), out.k[i]), 0);
      assert.ok(Math.abs(recomputed - out.objective) <= 1e-12);
    }),
    { numRuns: 500, seed: 5 },
  );
});

test('ρ follows the observed reward: a success prefix with low q is worth expanding', () => {
  assert.equal(repeatChance(0.2, 1), 0.2);
  assert.equal(repeatChance(0.2, 0), 0.8);
  const out = solvePrefixes(
    [
      { id: 'sure-success', q: 1, r: 1 },
      { id: 'surprising-success', q: 0.1, r: 1 },
      { id: 'expected-failure', q: 0.1, r: 0 },
    ],
    3,
  );
  // Gains: sure-success 0; surprising-success (ρ = 0.1) 0.9, 0.09, 0.009; expected-failure (ρ = 0.9)
  // 0.1, 0.09. Units: 0.9 → surprising, 0.1 → expected, 0.09 tie → the earlier prefix.
  assert.deepEqual(out.k, [0, 2, 1]);
  assert.ok(Math.abs(out.objective - (0.99 + 0.1)) < 1e-12);
});

test('ties go to the earlier prefix; equal prefixes share the budget evenly', () => {
  const ps = [0, 1, 2, 3].map((i) => ({ id: `p${i}`, q: 0.5, r: 1 }));
  assert.deepEqual(solvePrefixes(ps, 6).k, [2, 2, 1, 1]);
  // ρ = 0: the first continuation flips for sure, further ones add nothing; still spent, lower index first.
  assert.deepEqual(
    solvePrefixes(
      [
        { id: 'a', q: 0, r: 1 },
        { id: 'b', q: 0, r: 1 },
      ],
      3,
    ).k,
    [2, 1],
  );
});

test('bad input names the field; no prefixes with a positive budget is infeasible', () => {
  assert.throws(
    () => solvePrefixes([{ id: 'a', q: 1.5, r: 1 }], 1),
    (e: unknown) => e instanceof AllocationInputError && e.field === 'prefixes[0].q',
  );
  assert.throws(() => solvePrefixes([{ id: 'a', q: 0.5, r: 1 }], -1), AllocationInputError);
  assert.throws(() => solvePrefixes([], 2), InfeasibleBudgetError);
  assert.deepEqual(solvePrefixes([], 0), { k: [], objective: 0 });
});
