/**
 * strategy defensive: prompts drawn from q = (1 − ε)·uniform + ε·(chance a group is mixed), advantages
 * weighted by 1/(n·q). The claims in its doc comment, checked: the weighted draw is unbiased for the
 * uniform mean, its second moment is within 1/(1 − ε) of uniform sampling's for any predictor, the
 * sampler follows q, and the weights reach the step's advantages through the real engine and estimator.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createEstimator, forestFromTrees } from '../../src/advantage/index.ts';
import { createStrategy, type RootCandidate } from '../../src/allocate/index.ts';
import { inclusion, proposal } from '../../src/allocate/strategies/defensive.ts';
import { Simulator } from '../../src/env/index.ts';
import { SimulatorPolicy } from '../../src/policy/index.ts';
import { runStep } from '../../src/rollout/index.ts';
import { stepAdvantages } from '../../src/train/policy-samples.ts';
import { createRng } from '../../src/util/rng.ts';

const candidates = (vs: readonly number[]): RootCandidate[] => vs.map((v, i) => ({ promptId: `q${i}`, v }));
const input = (cs: readonly RootCandidate[], total: number, seed = 0) => ({
  candidates: cs,
  round: 0,
  budget: total,
  remaining: total,
  results: new Map(),
  rng: createRng(seed),
});

test('the weighted draw is unbiased for the uniform mean, and its second moment is at most 1/(1 − ε) of uniform sampling’s', () => {
  const rng = createRng(5);
  for (const eps of [0, 0.25, 0.5, 0.9]) {
    for (let trial = 0; trial < 50; trial++) {
      const n = 2 + Math.floor(rng.next() * 40);
      const cs = candidates(Array.from({ length: n }, () => (rng.next() < 0.3 ? (rng.next() < 0.5 ? 0 : 1) : rng.next())));
      // x_i stands for prompt i's gradient; adversarial too: large exactly where the predictor sees no mixing.
      const x = cs.map((c) => (c.v === 0 || c.v === 1 ? 10 * rng.next() : rng.next() - 0.5));
      const q = proposal(cs, 3, eps);
      const w = q.map((qi) => 1 / (n * qi));
      assert.ok(Math.abs(q.reduce((a, b) => a + b, 0) - 1) < 1e-12, 'q sums to 1');
      const mean = x.reduce((a, b) => a + b, 0) / n;
      const weighted = q.reduce((s, qi, i) => s + qi * w[i]! * x[i]!, 0);
      assert.ok(Math.abs(weighted - mean) < 1e-12, `E_q[w x] = ${weighted}, uniform mean ${mean}`);
      const uniform2 = x.reduce((s, xi) => s + xi * xi, 0) / n;
      const second = q.reduce((s, qi, i) => s + qi * (w[i]! * x[i]!) ** 2, 0);
      assert.ok(second <= uniform2 / (1 - eps) + 1e-9, `second moment ${second} > ${uniform2} / (1 − ${eps})`);
      for (const wi of w) assert.ok(wi <= 1 / (1 - eps) + 1e-12, `weight ${wi} above 1/(1 − ε)`);
    }
  }
});

test('ε = 0 is uniform with weight 1, for either draws and more groups than prompts; no predicted mixing falls back to uniform', () => {
  const cs = candidates([0.1, 0.5, 0.9, 0.3]);
  for (const draws of ['independent', 'systematic'] as const) {
    // 10 groups of 3 over 4 prompts: systematic takes each prompt once and spreads the rest (a first
    // version weighted them K / n = 2.5).
    const s = createStrategy('defensive', { budget: 30, groupSize: 3, explore: 0, draws });
    for (const w of s.roots.weights!(input(cs, 30)).values()) assert.equal(w, 1, draws);
  }
  assert.deepEqual(proposal(candidates([0, 1, 1]), 3, 0.5), [1 / 3, 1 / 3, 1 / 3]);
});

test('the plan spends the whole budget in groups of G, and its draws follow q', () => {
  const cs = candidates([0.5, 0.05, 0.95, 0.5, 0.02, 0.6, 0.99, 0.3]);
  const s = createStrategy('defensive', { budget: 32, groupSize: 4, explore: 0.5, draws: 'independent' });
  const q = proposal(cs, 4, 0.5);
  const draws = cs.map(() => 0);
  const seeds = 4000;
  for (let seed = 0; seed < seeds; seed++) {
    const plan = s.roots.plan(input(cs, 32, seed));
    assert.equal(
      [...plan.values()].reduce((a, b) => a + b, 0),
      32,
    );
    for (const [id, m] of plan) {
      assert.equal(m % 4, 0, 'whole groups when G divides the budget');
      draws[Number(id.slice(1))]! += m / 4;
    }
  }
  // 32 000 draws: each share within 4 binomial sd of q_i.
  draws.forEach((d, i) => {
    const sd = Math.sqrt((q[i]! * (1 - q[i]!)) / (seeds * 8));
    assert.ok(Math.abs(d / (seeds * 8) - q[i]!) < 4 * sd, `prompt ${i}: share ${d / (seeds * 8)} against q ${q[i]}`);
  });
  // A remainder below one group goes one rollout each to drawn prompts.
  const odd = s.roots.plan(input(cs, 34, 1));
  assert.equal(
    [...odd.values()].reduce((a, b) => a + b, 0),
    34,
  );
});

test('systematic draws: no prompt twice, each in with probability K·q_i (capped at 1), and the weighted sum unbiased', () => {
  const cs = candidates([0.5, 0.05, 0.95, 0.5, 0.02, 0.6, 0.99, 0.3, 0.45, 0.7]);
  const x = cs.map((_, i) => Math.sin(i + 1));
  const s = createStrategy('defensive', { budget: 12, groupSize: 3, explore: 0.9, draws: 'systematic' });
  const pi = inclusion(proposal(cs, 3, 0.9), 4);
  assert.ok(Math.abs(pi.reduce((a, b) => a + b, 0) - 4) < 1e-9, 'Σ π = K');
  assert.ok(pi.every((p) => p > 0 && p <= 1));
  assert.deepEqual(inclusion([0.7, 0.1, 0.1, 0.1], 2), [1, 1 / 3, 1 / 3, 1 / 3], 'a prompt above 1 is capped and the rest rescaled');
  const w = s.roots.weights!(input(cs, 12));
  const seen = cs.map(() => 0);
  const seeds = 20_000;
  let estimate = 0;
  for (let seed = 0; seed < seeds; seed++) {
    const plan = s.roots.plan(input(cs, 12, seed));
    assert.equal(plan.size, 4, 'K distinct prompts');
    assert.equal(
      [...plan.values()].reduce((a, b) => a + b, 0),
      12,
    );
    for (const id of plan.keys()) {
      const i = Number(id.slice(1));
      seen[i]!++;
      // (1/K) Σ_{i ∈ S} w_i x_i with w_i = (K/n)/π_i estimates the uniform mean.
      estimate += (w.get(id)! * x[i]!) / 4;
    }
  }
  seen.forEach((c, i) => {
    const sd = Math.sqrt((pi[i]! * (1 - pi[i]!)) / seeds);
    assert.ok(Math.abs(c / seeds - pi[i]!) < 4 * sd + 1e-9, `prompt ${i}: in ${c / seeds} of draws, π = ${pi[i]}`);
  });
  const mean = x.reduce((a, b) => a + b, 0) / x.length;
  assert.ok(Math.abs(estimate / seeds - mean) < 0.01, `HT estimate ${estimate / seeds} against the uniform mean ${mean}`);
});

test('through the engine and the estimator: each tree’s root carries 1/(n·q) and its advantages are scaled by it', async () => {
  const env = new Simulator({ seed: 11 });
  const prompts = env.prompts(16);
  const strategy = createStrategy('defensive', { budget: 48, groupSize: 4, explore: 0.75, draws: 'independent' });
  const scorer = (hs: readonly unknown[]) => hs.map((_, i) => [0.5, 0.05, 0.95, 0.3][i % 4]!);
  const { trees } = await runStep({ prompts, env, policy: new SimulatorPolicy(env), rng: createRng(2), strategy, scorer, settings: { concurrency: 4 } });
  const weights = trees.map((t) => t.nodes[t.promptId]!.weight);
  assert.ok(
    weights.every((w) => w !== undefined && w > 0 && w <= 4),
    `every root weighted, at most 1/(1 − ε) = 4: ${weights.join(', ')}`,
  );
  assert.ok(new Set(weights).size > 1, 'prompts predicted differently are drawn with different q');
  const estimator = createEstimator('grpo');
  const raw = estimator.estimate(forestFromTrees(trees));
  const scaled = stepAdvantages(estimator, trees);
  assert.equal(scaled.length, raw.length);
  const weightOf = new Map(trees.map((t) => [t.promptId, t.nodes[t.promptId]!.weight!]));
  scaled.forEach((a, k) => {
    const w = weightOf.get(a.path[0]!.slice(0, a.path[0]!.lastIndexOf('/')))!;
    assert.equal(a.advantage, raw[k]!.advantage * w);
    assert.deepEqual(
      a.turns,
      raw[k]!.turns.map((x) => x * w),
    );
  });
  // grpo's trees carry no weight, and its advantages are the estimator's unchanged.
  const plain = await runStep({
    prompts,
    env,
    policy: new SimulatorPolicy(env),
    rng: createRng(2),
    strategy: createStrategy('grpo', { budget: 48, groupSize: 4 }),
  });
  assert.ok(plain.trees.every((t) => t.nodes[t.promptId]!.weight === undefined));
  assert.deepEqual(stepAdvantages(estimator, plain.trees), estimator.estimate(forestFromTrees(plain.trees)));
});

test('the default draws are systematic (final-r4-defensive: independent repeats cost distinct prompts and lost 2.1 points)', () => {
  const cs = candidates([0.5, 0.05, 0.95, 0.5, 0.02, 0.6, 0.99, 0.3, 0.45, 0.7]);
  const byDefault = createStrategy('defensive', { budget: 12, groupSize: 3 });
  const independent = createStrategy('defensive', { budget: 12, groupSize: 3, draws: 'independent' });
  let repeats = 0;
  for (let seed = 0; seed < 200; seed++) {
    assert.equal(byDefault.roots.plan(input(cs, 12, seed)).size, 4, `seed ${seed}: four distinct prompts`);
    if (independent.roots.plan(input(cs, 12, seed)).size < 4) repeats++;
  }
  // Four independent draws from ten prompts repeat one with probability about 0.5: the contrast is real.
  assert.ok(repeats > 50, `independent draws repeated a prompt in ${repeats} of 200 plans`);
});

test('when the budget covers every prompt, defensive is grpo: each prompt ⌊B / n⌋ or one more, weight 1, whatever the predictor says', () => {
  const cs = candidates([0.01, 0.5, 0.99, 0.3]);
  const s = createStrategy('defensive', { budget: 30, explore: 0.75 });
  const grpo = createStrategy('grpo', { budget: 30 });
  const sorted = (m: Map<string, number>) => [...m.values()].sort((a, b) => a - b);
  for (let seed = 0; seed < 50; seed++) {
    const plan = s.roots.plan(input(cs, 30, seed));
    assert.equal(plan.size, 4, `seed ${seed}: every prompt`);
    assert.deepEqual(sorted(plan), sorted(grpo.roots.plan(input(cs, 30, seed))), `seed ${seed}: grpo's group sizes`);
  }
  for (const w of s.roots.weights!(input(cs, 30)).values()) assert.equal(w, 1);
});
