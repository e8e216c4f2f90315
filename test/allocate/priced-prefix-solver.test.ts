import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { AllocationInputError } from '../../src/allocate/errors.ts';
import { PRICED_BUDGET_UNITS, PRICED_WORK_LIMIT, pricedUnits, solvePricedPrefixes } from '../../src/allocate/solvers/priced-prefix-solver.ts';
import { flipChance, repeatChance, solvePrefixes } from '../../src/allocate/solvers/prefix-solver.ts';
import { brutePricedPrefixes, brutePrefixes } from './brute-force.ts';

const prob = fc.oneof(fc.constantFrom(0, 1, 0.5), fc.double({ min: 0, max: 1, noNaN: true }));
const priced = fc.record({
  q: prob,
  r: fc.constantFrom(0, 1),
  cost: fc.integer({ min: 1, max: 5 }),
  w: fc.oneof(fc.constant(1), fc.double({ min: 0, max: 3, noNaN: true })),
});

const spent = (k: readonly number[], cost: readonly number[]) => k.reduce((a, K, i) => a + K * cost[i], 0);

test('priced prefixes: the dynamic programme matches exhaustive search on random small cases (exact values)', () => {
  fc.assert(
    fc.property(fc.array(priced, { minLength: 1, maxLength: 4 }), fc.integer({ min: 0, max: 14 }), (ps, budget) => {
      const input = ps.map((p, i) => ({ id: `p${i}`, ...p }));
      const out = solvePrefixes(input, budget);
      assert.ok(out.k.every((K) => Number.isInteger(K) && K >= 0));
      assert.ok(
        spent(
          out.k,
          ps.map((p) => p.cost),
        ) <= budget,
        'never spends more than the budget',
      );
      const best = brutePricedPrefixes(ps, budget);
      assert.ok(Math.abs(out.objective - best) <= 1e-9, `${out.objective} vs ${best}`);
      const recomputed = ps.reduce((s, p, i) => s + p.w * flipChance(repeatChance(p.q, p.r), out.k[i]), 0);
      assert.ok(Math.abs(recomputed - out.objective) <= 1e-12);
    }),
    { numRuns: 400, seed: 11 },
  );
});

test('with every cost 1 the priced solver and the greedy agree (the trajectories unit is unchanged)', () => {
  fc.assert(
    fc.property(fc.array(fc.record({ q: prob, r: fc.constantFrom(0, 1) }), { minLength: 1, maxLength: 5 }), fc.integer({ min: 0, max: 10 }), (ps, budget) => {
      const input = ps.map((p, i) => ({ id: `p${i}`, ...p, cost: 1 }));
      const dp = solvePricedPrefixes(input, budget);
      assert.ok(Math.abs(dp.objective - brutePrefixes(ps, budget)) <= 1e-9);
      assert.ok(
        Math.abs(
          dp.objective -
            solvePrefixes(
              input.map(({ cost: _, ...p }) => p),
              budget,
            ).objective,
        ) <= 1e-9,
      );
    }),
    { numRuns: 200, seed: 12 },
  );
});

test('greedy by gain per unit of cost is not exact, the programme is (a hand-worked case)', () => {
  // Budget 4. A (cost 1, ρ = 0.5): gains 0.5, 0.25, 0.125, … per unit 0.5, 0.25, …
  // B (cost 3, ρ = 0): gain 1 for the first continuation, 0.333 per unit.
  // Per-unit greedy takes A, then B does not fit after A, A, … : A×4 = 0.9375. Best: A×1 + B×1 = 1.5.
  const out = solvePrefixes(
    [
      { id: 'A', q: 0.5, r: 1, cost: 1 },
      { id: 'B', q: 0, r: 1, cost: 3 },
    ],
    4,
  );
  assert.deepEqual(out.k, [1, 1]);
  assert.ok(Math.abs(out.objective - 1.5) < 1e-12);
});

test('a token budget above the table size is solved on coarser units, never overspending', () => {
  const costs = [700, 1300, 2900, 450];
  const input = costs.map((cost, i) => ({ id: `p${i}`, q: 0.3 + 0.1 * i, r: i % 2, cost }));
  const budget = 20_000;
  assert.ok(budget > PRICED_BUDGET_UNITS);
  const out = solvePrefixes(input, budget);
  assert.ok(spent(out.k, costs) <= budget);
  // Scaled to 4096 units each continuation is overpriced by under one unit (≈ 4.9 tokens), so any plan
  // that fits budget − 4.9 · (most continuations that fit) at the true costs fits the scaled problem.
  const most = Math.floor(budget / Math.min(...costs));
  assert.ok(out.objective >= brutePricedPrefixes(input, budget - Math.ceil((most * budget) / PRICED_BUDGET_UNITS)) - 1e-9);
  assert.ok(out.objective <= brutePricedPrefixes(input, budget) + 1e-9);
});

test('costs must be integers ≥ 1, named by their field', () => {
  assert.throws(
    () => solvePrefixes([{ id: 'a', q: 0.5, r: 1, cost: 0 }], 3),
    (e) => e instanceof AllocationInputError && /prefixes\[0\]\.cost/.test(e.message),
  );
  assert.throws(() => solvePrefixes([{ id: 'a', q: 0.5, r: 1, cost: 1.5 }], 3), AllocationInputError);
});

const tokenPrefixes = fc.array(
  fc.record({
    q: prob,
    r: fc.constantFrom(0, 1),
    cost: fc.integer({ min: 1, max: 400 }),
    w: fc.oneof(fc.constant(1), fc.double({ min: 0, max: 3, noNaN: true })),
  }),
  { minLength: 1, maxLength: 12 },
);

test('under the work cap the bounded solver is the exact programme, answer for answer', () => {
  fc.assert(
    fc.property(tokenPrefixes, fc.integer({ min: 0, max: 3000 }), (ps, budget) => {
      const input = ps.map((p, i) => ({ id: `p${i}`, ...p }));
      fc.pre(pricedUnits(input, budget).exact);
      assert.deepEqual(solvePricedPrefixes(input, budget), solvePricedPrefixes(input, budget, Infinity));
    }),
    { numRuns: 200, seed: 13 },
  );
});

test('past the work cap: coarser units, never over the budget, within the stated bound of the exact answer', () => {
  const ratios: number[] = [];
  fc.assert(
    fc.property(tokenPrefixes, fc.integer({ min: 200, max: 3000 }), fc.integer({ min: 2_000, max: 200_000 }), (ps, budget, limit) => {
      const input = ps.map((p, i) => ({ id: `p${i}`, ...p }));
      const { units, exact } = pricedUnits(input, budget, limit);
      fc.pre(!exact);
      const approx = solvePricedPrefixes(input, budget, limit);
      const best = solvePricedPrefixes(input, budget, Infinity);
      assert.ok(
        spent(
          approx.k,
          ps.map((p) => p.cost),
        ) <= budget,
        'never spends more than the budget',
      );
      assert.ok(approx.objective <= best.objective + 1e-9);
      // Exact for costs rounded up to whole units of budget / units: every plan that fits the budget
      // less one coarse unit per continuation at the true costs is within its reach.
      const most = Math.floor(budget / Math.min(...ps.map((p) => p.cost)));
      const reach = Math.max(0, budget - most * Math.ceil(budget / units));
      assert.ok(approx.objective >= solvePricedPrefixes(input, reach, Infinity).objective - 1e-9);
      if (best.objective > 0) ratios.push(approx.objective / best.objective);
    }),
    { numRuns: 150, seed: 14 },
  );
  ratios.sort((a, b) => a - b);
  assert.ok(ratios.length > 20, `${ratios.length} cases past the cap`);
  // Measured, not a guarantee: the greedy top-up spends what rounding left, so the answers stay close.
  assert.ok(ratios[Math.floor(ratios.length / 2)]! > 0.97, `median ratio ${ratios[Math.floor(ratios.length / 2)]}`);
});

test('a budget that made the exact programme take seconds is solved within the cap, quickly', () => {
  // 64 prefixes of 1–3 turns at a budget of 4,000 turns: about 2·10⁸ steps exactly.
  const input = Array.from({ length: 64 }, (_, i) => ({ id: `p${i}`, q: (i % 10) / 10, r: i % 2, cost: 1 + (i % 3) }));
  const budget = 4000;
  assert.equal(pricedUnits(input, budget).exact, false);
  const t0 = performance.now();
  const out = solvePricedPrefixes(input, budget);
  const ms = performance.now() - t0;
  assert.ok(
    spent(
      out.k,
      input.map((p) => p.cost),
    ) <= budget,
  );
  assert.ok(ms < 2_000, `${ms.toFixed(0)} ms`);
  assert.ok(PRICED_WORK_LIMIT <= 20_000_000);
});
