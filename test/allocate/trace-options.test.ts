import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ZodError } from 'zod';
import { createStrategy, RECOMMENDED_TRACE_OPTIONS, strategyFromConfig } from '../../src/allocate/index.ts';
import { mixedChance } from '../../src/allocate/solvers/mixed-value.ts';
import { expansionValue, poolLeftover, posteriorRoot } from '../../src/allocate/trace-options.ts';
import { solvePrefixes } from '../../src/allocate/solvers/prefix-solver.ts';
import { solveWeighted } from '../../src/allocate/solvers/weighted-solver.ts';
import type { PrefixCandidate, RootCandidate } from '../../src/allocate/types.ts';
import { Simulator } from '../../src/env/index.ts';
import { SimulatorPolicy } from '../../src/policy/index.ts';
import { runStep } from '../../src/rollout/index.ts';
import { createRng } from '../../src/util/rng.ts';
import { treeCounts } from '../rollout/helpers.ts';

const rng = createRng(0);
const rootInput = (candidates: RootCandidate[], remaining: number) => ({ candidates, round: 0, remaining, results: new Map(), rng });
const plan = (m: Map<string, number>) => Object.fromEntries([...m].sort());

test('rootPrior: posterior = (κ·Ṽ + successes) / (κ + trials); it moves the root allocation to what was observed', () => {
  assert.equal(posteriorRoot({ promptId: 'a', v: 0.5, history: { successes: 4, trials: 4 } }, 4), 0.75);
  assert.equal(posteriorRoot({ promptId: 'a', v: 0.25 }, 4), 0.25, 'an unseen prompt keeps Ṽ');
  // Ṽ calls both prompts coin flips; the history says a is always solved. M = ⌊6/3⌋ = 2: one prompt.
  const cs: RootCandidate[] = [
    { promptId: 'a', v: 0.5, history: { successes: 12, trials: 12 } },
    { promptId: 'b', v: 0.45 },
  ];
  assert.deepEqual(plan(createStrategy('trace', { budget: 6 }).roots.plan(rootInput(cs, 6))), { a: 2 });
  assert.deepEqual(plan(createStrategy('trace', { budget: 6, rootPrior: 'posterior' }).roots.plan(rootInput(cs, 6))), { b: 2 });
});

test('rootValue: expansion-aware adds m · d · (1 − (v² + (1 − v)²)^N); a one-turn coin flip loses to a searchable prompt', () => {
  assert.equal(expansionValue(0.5, 1, 2), 0.75);
  assert.equal(expansionValue(0.5, 0, 2), 0);
  assert.equal(expansionValue(1, 1, 2), 0);
  // B = 9, N = 2 → M = 3 bare rollouts: room for one prompt. a: v = ½ but never has a prefix (d = 0);
  // b: v = 0.3 and always multi-turn (d = 1).
  const cs: RootCandidate[] = [
    { promptId: 'a', v: 0.5, expandable: 0 },
    { promptId: 'b', v: 0.3, expandable: 1 },
  ];
  assert.deepEqual(plan(createStrategy('trace', { budget: 9 }).roots.plan(rootInput(cs, 9))), { a: 3 });
  assert.deepEqual(plan(createStrategy('trace', { budget: 9, rootValue: 'expansion-aware' }).roots.plan(rootInput(cs, 9))), { b: 3 });
  // The solver's objective with the per-unit term, exactly: V_root(0.3, 3) + 3 · (1 − 0.58²).
  const b = expansionValue(0.3, 1, 2);
  const s = solveWeighted(
    [
      { v: 0.5, w: 1, perUnit: 0 },
      { v: 0.3, w: 1, perUnit: b },
    ],
    { budget: 3, min: 2, max: 16 },
  );
  assert.deepEqual(s.m, [0, 3]);
  assert.ok(Math.abs(s.objective - (mixedChance(0.3, 3) + 3 * (1 - 0.58 ** 2))) < 1e-12);
  assert.ok(Math.abs(s.objective - 2.6208) < 1e-12);
});

/** Every Δ with Σ Δ ≤ L, the pool-leftover rules, by enumeration: the best value (spending as much as fits first). */
function bruteLeftover(v: number[], m: number[], L: number, min: number, max: number): number {
  let best = -1;
  const d = v.map(() => 0);
  const rec = (i: number, left: number) => {
    if (i === v.length) {
      const val = v.reduce((s, vi, j) => s + mixedChance(vi, m[j] + d[j]) - mixedChance(vi, m[j]), 0);
      best = Math.max(best, val);
      return;
    }
    for (let x = 0; x <= Math.min(left, max - m[i]); x++) {
      if (m[i] === 0 && x > 0 && x < min) continue;
      d[i] = x;
      rec(i + 1, left - x);
    }
    d[i] = 0;
  };
  rec(0, L);
  return best;
}

test('leftover: pool solves the leftover as a root problem over the whole pool (exact on hand-made and enumerated cases)', () => {
  // One selected coin flip (m = 2) and an unselected one: 2 units are worth V(½,4) − V(½,2) = 0.375 as a
  // top-up, V(½,2) = 0.5 on the new prompt.
  assert.deepEqual(poolLeftover([0.5, 0.5, 0.1], [2, 0, 0], 2, 2, 16), [0, 2, 0]);
  // 3 units: new prompt 2 + one more where the gain is largest (tie 0.25 / 0.25 → lower index).
  assert.deepEqual(poolLeftover([0.5, 0.5, 0.1], [2, 0, 0], 3, 2, 16), [1, 2, 0]);
  const cs: RootCandidate[] = [
    { promptId: 'a', v: 0.5 },
    { promptId: 'b', v: 0.5 },
    { promptId: 'c', v: 0.1 },
  ];
  const input = { candidates: cs, roots: new Map([['a', 2]]), remaining: 2, rng };
  assert.deepEqual(plan(createStrategy('trace', { budget: 9 }).leftover!.plan(input)), { a: 2 }, 'the paper: top-ups only');
  assert.deepEqual(plan(createStrategy('trace', { budget: 9, leftover: 'pool' }).leftover!.plan(input)), { b: 2 });
  const r = createRng(5);
  for (let c = 0; c < 300; c++) {
    const n = 1 + r.int(4);
    const v = Array.from({ length: n }, () => Math.round(r.next() * 20) / 20);
    const m = Array.from({ length: n }, () => (r.next() < 0.5 ? 0 : 2 + r.int(3)));
    const L = r.int(8);
    const max = 2 + r.int(5) + 2;
    const mm = m.map((x) => Math.min(x, max));
    const d = poolLeftover(v, mm, L, 2, max);
    d.forEach((x, i) => {
      assert.ok(mm[i] + x <= max);
      if (mm[i] === 0) assert.ok(x === 0 || x >= 2);
    });
    assert.ok(d.reduce((a, b) => a + b, 0) <= L);
    const got = v.reduce((s, vi, j) => s + mixedChance(vi, mm[j] + d[j]) - mixedChance(vi, mm[j]), 0);
    assert.ok(Math.abs(got - bruteLeftover(v, mm, L, 2, max)) < 1e-9, `case ${c}: ${JSON.stringify({ v, m: mm, L, max, d })}`);
  }
});

test('prefixes: entropy-weighted weights prefix j by 1 + β·H_j (AT²PO-style): equal prefixes go to the uncertain one', () => {
  const prefixes: PrefixCandidate[] = [
    { id: 'x/0/1', q: 0.5, r: 1, depth: 1, entropy: 0 },
    { id: 'x/1/1', q: 0.5, r: 1, depth: 1, entropy: 1.2 },
  ];
  const input = { promptId: 'x', m: 2, prefixes, budget: 1, rng };
  assert.deepEqual(plan(createStrategy('trace', { budget: 9 }).prefixes!.plan(input)), { 'x/0/1': 1 }, 'the paper: tie → first prefix');
  assert.deepEqual(plan(createStrategy('trace', { budget: 9, prefixes: 'entropy-weighted' }).prefixes!.plan(input)), { 'x/1/1': 1 });
  // β = 0 is the paper's solver again.
  assert.deepEqual(plan(createStrategy('trace', { budget: 9, prefixes: 'entropy-weighted', entropyWeight: 0 }).prefixes!.plan(input)), { 'x/0/1': 1 });
});

test('prefixes: decision-weighted weights prefix j by the turns after it (T_j − t): exact allocation and objective', () => {
  // Equal flip chances (ρ = ½); a is one turn before the answer, b three. Gains: a 0.5, 0.25, …;
  // b 1.5, 0.75, 0.375, … The 3 largest: 1.5, 0.75 (b) and 0.5 (a) → b 2, a 1, objective 2.75.
  const prefixes: PrefixCandidate[] = [
    { id: 'x/0/2', q: 0.5, r: 1, depth: 3, after: 1 },
    { id: 'x/1/0', q: 0.5, r: 1, depth: 1, after: 3 },
  ];
  const input = { promptId: 'x', m: 2, prefixes, budget: 3, rng };
  assert.deepEqual(
    plan(createStrategy('trace', { budget: 9 }).prefixes!.plan(input)),
    { 'x/0/2': 2, 'x/1/0': 1 },
    'the paper: equal gains, the first prefix first',
  );
  assert.deepEqual(plan(createStrategy('trace', { budget: 9, prefixes: 'decision-weighted' }).prefixes!.plan(input)), { 'x/0/2': 1, 'x/1/0': 2 });
  const s = solvePrefixes(
    prefixes.map((c) => ({ id: c.id, q: c.q, r: c.r, w: c.after })),
    3,
  );
  assert.deepEqual(s.k, [1, 2]);
  assert.equal(s.objective, 2.75);
});

test('branchFrom: prefixes shallower than t_min are not branch points; the rootResample root stays a candidate', () => {
  // Three prefixes with equal flip chances; the paper spreads 3 continuations one each. With
  // branchFrom 2 the depth-1 prefix is gone and its share goes to the two deeper ones (2 + 1).
  const prefixes: PrefixCandidate[] = [
    { id: 'x/0', q: 0.5, r: 1, depth: 1 },
    { id: 'x/0/0', q: 0.5, r: 1, depth: 2 },
    { id: 'x/0/0/0', q: 0.5, r: 1, depth: 3 },
  ];
  const input = { promptId: 'x', m: 2, prefixes, budget: 3, rng };
  assert.deepEqual(plan(createStrategy('trace', { budget: 9 }).prefixes!.plan(input)), { 'x/0': 1, 'x/0/0': 1, 'x/0/0/0': 1 });
  assert.deepEqual(plan(createStrategy('trace', { budget: 9, branchFrom: 2 }).prefixes!.plan(input)), { 'x/0/0': 2, 'x/0/0/0': 1 });
  assert.deepEqual(
    plan(createStrategy('trace', { budget: 9, branchFrom: 4 }).prefixes!.plan(input)),
    {},
    'no branch point left: the budget stays for the leftover',
  );
  // The root candidate of rootResample (depth 0) is one more bare rollout, not a branch point: kept.
  const withRoot = { ...input, prefixes: [{ id: 'x', q: 0.5, r: 1, depth: 0 }, ...prefixes] };
  assert.deepEqual(plan(createStrategy('trace', { budget: 9, rootResample: true, branchFrom: 3 }).prefixes!.plan(withRoot)), { x: 2, 'x/0/0/0': 1 });
  assert.throws(() => strategyFromConfig({ name: 'trace', budget: 9, branchFrom: 0 }), /branchFrom/);
});

test('prefixValue outcome-blind: the plan ignores the observed rewards and spends by V̂(1 − V̂)', () => {
  // q = 0.9 observed a failure (the paper's flip rule loves it: ρ = 0.1); q = 0.5 observed a success.
  const prefixes: PrefixCandidate[] = [
    { id: 'x/0', q: 0.9, r: 0, depth: 1 },
    { id: 'x/1', q: 0.5, r: 1, depth: 1 },
  ];
  const input = { promptId: 'x', m: 2, prefixes, budget: 2, rng };
  assert.deepEqual(
    plan(createStrategy('trace', { budget: 9 }).prefixes!.plan(input)),
    { 'x/0': 1, 'x/1': 1 },
    'flip: 0.9 then 0.5, then ρ-discounted 0.09 < 0.5',
  );
  const blind = createStrategy('trace', { budget: 9, prefixValue: 'outcome-blind' }).prefixes!;
  // Outcome-blind: first gains 2·0.9·0.1 = 0.18 and 2·0.5·0.5 = 0.5, second at 0.5 is 0.5·0.5 = 0.25 > 0.18.
  assert.deepEqual(plan(blind.plan(input)), { 'x/1': 2 });
  for (const flipped of [
    [1, 1],
    [0, 0],
    [1, 0],
  ]) {
    const other = { ...input, prefixes: prefixes.map((c, i) => ({ ...c, r: flipped[i]! })) };
    assert.deepEqual(plan(blind.plan(other)), { 'x/1': 2 }, `rewards ${flipped}`);
  }
  assert.throws(
    () => strategyFromConfig({ name: 'trace', budget: 9, prefixes: 'uniform', prefixValue: 'outcome-blind' }),
    /prefixValue: outcome-blind steers the prefix solver/,
  );
});

test('unknown or misplaced trace options are rejected', () => {
  assert.throws(() => strategyFromConfig({ name: 'trace', budget: 9, expansionRounds: 1.5 }), ZodError);
  assert.throws(() => strategyFromConfig({ name: 'oracle', budget: 9, prefixes: 'decision-weighted' }), ZodError);
  assert.throws(() => strategyFromConfig({ name: 'trace', budget: 9, rootvalue: 'expansion-aware' }), ZodError);
  assert.throws(() => strategyFromConfig({ name: 'trace', budget: 9, rootValue: 'deep' }), ZodError);
  assert.throws(() => strategyFromConfig({ name: 'grpo', budget: 9, rootValue: 'expansion-aware' }), /trace only/);
  assert.throws(() => strategyFromConfig({ name: 'oracle', budget: 9, prefixes: 'entropy-weighted' }), /"path": \[\s*"prefixes"\s*\]/);
  assert.throws(() => strategyFromConfig({ name: 'trace', budget: 9, priorStrength: 2 }), /rootPrior: posterior/);
  assert.throws(() => strategyFromConfig({ name: 'trace', budget: 9, entropyWeight: 2 }), /entropy-weighted/);
});

test('options of the root solver are rejected beside roots: uniform (they would be ignored); the recommendation parses', () => {
  for (const [k, v] of [
    ['leftover', 'pool'],
    ['rootValue', 'expansion-aware'],
    ['rootPrior', 'posterior'],
  ] as const) {
    assert.throws(
      () => strategyFromConfig({ name: 'trace', budget: 9, roots: 'uniform', [k]: v }),
      new RegExp(`${k}: ${v} steers the root solver, which roots: uniform does not use`),
    );
    assert.doesNotThrow(() => strategyFromConfig({ name: 'trace', budget: 9, [k]: v }));
  }
  assert.doesNotThrow(() => strategyFromConfig({ name: 'trace', budget: 9, roots: 'uniform', leftover: 'top-up', rootValue: 'mixed', rootPrior: 'shared' }));
  assert.equal(strategyFromConfig({ name: 'trace', budget: 9, ...RECOMMENDED_TRACE_OPTIONS }).name, 'trace');
});

test('continuations: a fraction N = ½ gives M = ⌊B / 1.5⌋ bare rollouts and ⌊m · N⌋ continuations per prompt', async () => {
  const budget = 12;
  const strategy = createStrategy('trace', { budget, continuations: 0.5, roots: 'uniform', prefixes: 'decision-weighted' });
  assert.equal(strategy.prefixes!.continuationBudget(2), 1);
  assert.equal(strategy.prefixes!.continuationBudget(3), 1, 'the floor drops the half; it stays with the leftover');
  assert.equal(createStrategy('trace', { budget, continuations: 0.3 }).prefixes!.continuationBudget(10), 3, '10 × 0.3 is 3, not 2.999…');
  // Through the engine on the simulator: 8 bare rollouts as 4 prompts × 2 (uniform roots cover more of
  // the pool than N = 2's 2 prompts × 2), then one continuation per prompt at its best prefix.
  const env = new Simulator({ seed: 21 });
  const res = await runStep({ prompts: env.prompts(6), env, policy: new SimulatorPolicy(env), rng: createRng(3), strategy, settings: { concurrency: 4 } });
  const byPrompt = res.trees.map((t) => treeCounts([t]));
  assert.deepEqual(
    byPrompt.map((c) => c.bare),
    [2, 2, 2, 2],
  );
  const atN2 = await runStep({
    prompts: env.prompts(6),
    env,
    policy: new SimulatorPolicy(env),
    rng: createRng(3),
    strategy: createStrategy('trace', { budget, roots: 'uniform' }),
    settings: { concurrency: 4 },
  });
  assert.deepEqual(
    atN2.trees.map((t) => treeCounts([t]).bare),
    [2, 2],
  );
  assert.deepEqual(
    byPrompt.map((c) => c.continuation),
    [1, 1, 1, 1],
  );
  assert.deepEqual([res.spend.bare, res.spend.continuation], [8, 4], 'the whole budget, 8 + 4 = 12');
});
