/**
 * The guarded strategy's guard (src/allocate/guard.ts) on hand-made yield streams, and its plan: grpo's
 * groups on (1 − s) of the budget, the root solver on the rest of the pool.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  binomialUpperTail,
  createStrategy,
  initialGuard,
  nextGuard,
  spentAlpha,
  yieldTest,
  type GuardOptions,
  type GuardState,
  type PartYield,
} from '../../src/allocate/index.ts';
import type { RootCandidate, StepStart } from '../../src/allocate/types.ts';
import { createRng, type Rng } from '../../src/util/rng.ts';

const O: GuardOptions = { explore: 0.25, maxShare: 0.75, alpha: 0.05 };

test('binomialUpperTail is the exact tail: small cases by enumeration, and the two ends', () => {
  const choose = (n: number, k: number): number => (k === 0 || k === n ? 1 : choose(n - 1, k - 1) + choose(n - 1, k));
  for (const [n, p] of [
    [7, 0.3],
    [12, 0.5],
    [20, 0.05],
  ] as const) {
    for (let k = 0; k <= n + 1; k++) {
      let want = 0;
      for (let i = k; i <= n; i++) want += choose(n, i) * p ** i * (1 - p) ** (n - i);
      assert.ok(Math.abs(binomialUpperTail(k, n, p) - Math.min(1, want)) < 1e-12, `n ${n} k ${k} p ${p}`);
    }
  }
  assert.equal(binomialUpperTail(3, 10, 0), 0);
  assert.equal(binomialUpperTail(3, 10, 1), 1);
  // A far tail stays positive and tiny instead of rounding to 0 or going negative.
  const tiny = binomialUpperTail(900, 1000, 0.5);
  assert.ok(tiny > 0 && tiny < 1e-100);
});

test('the looks spend at most α in all', () => {
  let sum = 0;
  for (let n = 1; n <= 100_000; n++) sum += spentAlpha(0.05, n);
  assert.ok(sum < 0.05 && sum > 0.0499, `${sum}`);
});

test('yieldTest: a part with twice the rate on the same evidence is "higher"; no cost is no evidence', () => {
  const t = yieldTest({ mixed: 20, cost: 1000 }, { mixed: 40, cost: 1000 });
  assert.ok(t.higher < 0.01 && t.lower > 0.99);
  assert.deepEqual(yieldTest({ mixed: 20, cost: 1000 }, { mixed: 0, cost: 0 }), { higher: 1, lower: 1 });
});

/** Steps of a stream: each part's prompts are mixed with its own rate; costs 1 a rollout, 3 rollouts a prompt. */
function stream(state: GuardState, rates: { base: number; explore: number }, steps: number, rng: Rng, prompts = 64): GuardState[] {
  const path: GuardState[] = [];
  for (let t = 0; t < steps; t++) {
    const nExplore = Math.round(prompts * state.share);
    const part = (n: number, rate: number): PartYield => {
      let mixed = 0;
      for (let i = 0; i < n; i++) if (rng.next() < rate) mixed++;
      return { mixed, cost: 3 * n };
    };
    state = nextGuard(state, { base: part(prompts - nExplore, rates.base), explore: part(nExplore, rates.explore) }, O);
    path.push(state);
  }
  return path;
}

test('a solver part that yields twice as much climbs one ε at a time to maxShare, and stays', () => {
  const path = stream(initialGuard(O), { base: 0.3, explore: 0.6 }, 40, createRng(1));
  const shares = path.map((s) => s.share);
  assert.equal(shares[shares.length - 1], 0.75);
  for (let i = 1; i < shares.length; i++) assert.ok(Math.abs(shares[i]! - shares[i - 1]!) < 0.25 + 1e-9, 'one rung at a time');
  assert.ok(shares.indexOf(0.75) < 20, `reached maxShare at step ${shares.indexOf(0.75)}`);
});

test('a solver part that yields less is held at ε, and one that turns worse falls back to ε', () => {
  const held = stream(initialGuard(O), { base: 0.5, explore: 0.1 }, 40, createRng(2));
  assert.ok(held.every((s) => s.share === 0.25));
  const high: GuardState = { share: 0.75, base: { mixed: 0, cost: 0 }, explore: { mixed: 0, cost: 0 }, looks: 0 };
  const fell = stream(high, { base: 0.5, explore: 0.1 }, 10, createRng(3));
  assert.equal(fell[fell.length - 1]!.share, 0.25);
});

test('equal yields move the share above ε in at most α of runs (500 runs of 60 steps)', () => {
  const rng = createRng(4);
  let moved = 0;
  const runs = 500;
  for (let r = 0; r < runs; r++) if (stream(initialGuard(O), { base: 0.4, explore: 0.4 }, 60, rng.fork(`run/${r}`)).some((s) => s.share > 0.25)) moved++;
  assert.ok(moved / runs <= 0.05, `false rises ${moved} of ${runs}`);
});

const pool = (n: number, rng: Rng): RootCandidate[] => Array.from({ length: n }, (_, i) => ({ promptId: `q${i}`, v: rng.next() }));

/** What the loop hands a strategy before a step, with no evidence yet and no probe (the guard reads neither). */
const start = (candidates: readonly RootCandidate[], memory?: Record<string, unknown>): StepStart => ({
  candidates,
  evidence: () => undefined,
  multiTurnShare: 0.5,
  ...(memory ? { memory } : {}),
  freshOutcomes: () => Promise.reject(new Error('the guard draws no fresh outcomes')),
  run: { env: undefined, policy: undefined },
});

test('guarded plan: grpo’s groups on the first (1 − ε) of the budget, the solver on the rest of the pool, all of B spent', async () => {
  const candidates = pool(64, createRng(5));
  const s = createStrategy('guarded', { budget: 192 });
  const step = await s.perStep!(start(candidates));
  const plan = step.strategy.roots.plan({ candidates, round: 0, remaining: 192, results: new Map(), rng: createRng(6) });
  const total = [...plan.values()].reduce((a, b) => a + b, 0);
  assert.equal(total, 192);
  // G = ⌊192 / 64⌋ = 3; grpo's part: ⌊144 / 3⌋ = 48 prompts, the pool's first, 3 each.
  for (let i = 0; i < 48; i++) assert.equal(plan.get(`q${i}`), 3, `q${i}`);
  const explore = [...plan.entries()].filter(([id]) => Number(id.slice(1)) >= 48);
  assert.equal(
    explore.reduce((a, [, m]) => a + m, 0),
    48,
  );
  for (const [, m] of explore) assert.ok(m >= 2 && m <= 16);
  // Outcomes are read by part: grpo's 48 prompts against the solver's.
  const outcomes = [...plan.entries()].map(([promptId, m]) => ({ promptId, mixed: Number(promptId.slice(1)) % 2 === 0, cost: m }));
  const read = step.end!(outcomes);
  assert.equal(read.metrics.guard_share, 0.25);
  assert.equal(read.metrics.guard_base_yield, (1000 * 24) / 144);
  assert.equal((read.memory.guard as GuardState).looks, 1);
  // What it kept is what the next step starts from (a resumed run hands the stored memory back).
  const next = await s.perStep!(start(candidates, JSON.parse(JSON.stringify(read.memory))));
  assert.equal(next.end!([]).metrics.guard_share, 0.25);
  await assert.rejects(async () => s.perStep!(start(candidates, { guard: { share: 7 } })), /not a guard state/);
});

test('guarded with groupSize on a larger pool: at most ε of the budget leaves grpo’s plan', async () => {
  const candidates = pool(256, createRng(7));
  const grpo = createStrategy('grpo', { budget: 192, groupSize: 8 }).roots.plan({
    candidates,
    round: 0,
    remaining: 192,
    results: new Map(),
    rng: createRng(8),
  });
  const step = await createStrategy('guarded', { budget: 192, groupSize: 8, explore: 0.125 }).perStep!(start(candidates));
  const plan = step.strategy.roots.plan({ candidates, round: 0, remaining: 192, results: new Map(), rng: createRng(8) });
  const same = [...grpo.entries()].filter(([id, m]) => plan.get(id) === m).length;
  // grpo: 24 prompts × 8; guarded keeps ⌊168 / 8⌋ = 21 of them unchanged, (1 − ε) of grpo's prompts.
  assert.equal(grpo.size, 24);
  assert.equal(same, 21);
  assert.equal(
    [...plan.values()].reduce((a, b) => a + b, 0),
    192,
  );
  assert.ok(plan.size > grpo.size, 'the solver buys more distinct prompts with its 24 rollouts (groups of 2 allowed)');
});

test('guarded options are checked', () => {
  assert.throws(() => createStrategy('guarded', { budget: 192, explore: 0.6 }), /explore/);
  assert.throws(() => createStrategy('guarded', { budget: 192, explore: 0.4, maxShare: 0.3 }), /maxShare must be ≥ explore/);
});
