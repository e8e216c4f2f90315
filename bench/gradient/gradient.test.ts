/**
 * The gradient bench's arithmetic against the policy's own gradient code (EmbeddedPolicy.surrogate),
 * on real world rollouts: an arm's update direction and the reference's leave-one-out REINFORCE are
 * the surrogate's gradient at ratio 1 with the matching advantages; the bootstrap's Gram-matrix
 * cosines equal cosines of re-summed vectors.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEstimator, createTrace } from '../../src/advantage/index.ts';
import { strategyFromConfig } from '../../src/allocate/index.ts';
import type { EmbeddedPolicy, PolicySample } from '../../src/policy/index.ts';
import { runStep } from '../../src/rollout/index.ts';
import { buildComponents, collect, initialState, parseTrainConfig } from '../../src/train/index.ts';
import { policySamples } from '../../src/train/policy-samples.ts';
import { rewardedLeaves, turnsTo } from '../../src/tree/index.ts';
import { createRng } from '../../src/util/rng.ts';
import { aligned, gram, ResampledReference, resampleWeights } from './cosine-bootstrap.ts';
import { baselined } from './reference.ts';
import { ScoreGradients } from './score-gradient.ts';
import { cosine, SparseSum, sum, toDense, type SparseVec } from './sparse.ts';
import { updateDirection } from './update-direction.ts';

const config = parseTrainConfig({
  env: { questions: 60 },
  pool: 8,
  strategy: { name: 'random-tree', budget: 24, continuations: 2 },
  policy: { warmStart: 'none' },
});

async function setup() {
  const parts = await buildComponents(config);
  const policy = parts.trainable as EmbeddedPolicy;
  // Nonzero weights, so the policy is not uniform and the softmax terms of the gradient matter.
  const rng = createRng(5);
  for (let i = 0; i < policy.dim; i++) policy.weight(i, rng.next() - 0.5);
  return { parts, policy };
}

function assertDenseClose(got: Float64Array, want: Float64Array, what: string) {
  let worst = 0;
  let norm = 0;
  for (let i = 0; i < want.length; i++) {
    worst = Math.max(worst, Math.abs(got[i]! - want[i]!));
    norm = Math.max(norm, Math.abs(want[i]!));
  }
  assert.ok(norm > 0, `${what}: the policy's gradient is zero, the test compares nothing`);
  assert.ok(worst <= 1e-9 * Math.max(1, norm), `${what}: largest difference ${worst} (largest entry ${norm})`);
}

test('an arm’s update direction is the policy’s surrogate gradient at ratio 1, for tree estimators on branched trees', async () => {
  const { parts, policy } = await setup();
  const ctx = { config, parts, strategy: strategyFromConfig(config.strategy), estimator: createEstimator('grpo'), state: initialState(), clock: () => 0 };
  const { pool, rollout } = await collect(ctx, 0);
  assert.ok(rollout.spend.continuation > 0, 'the trees branch');
  const prompts = new Map(pool.map((p) => [p.id, p]));
  for (const estimator of [createEstimator('trace-local'), createTrace({ promptTerm: 'node' }), createEstimator('tree-grpo')]) {
    const dir = updateDirection(rollout.trees, estimator, prompts, new ScoreGradients(policy), config.engine.maxTurns);
    const { gradient, metrics } = policy.surrogate(policySamples(estimator, rollout.trees, pool));
    assertDenseClose(
      toDense(sum(dir.map((d) => d.total)), policy.dim),
      gradient.map((g) => g * metrics.turns),
      estimator.name,
    );
    // The depth parts add up to the whole.
    const depths = sum(dir.flatMap((d) => d.byDepth));
    assertDenseClose(toDense(depths, policy.dim), toDense(sum(dir.map((d) => d.total)), policy.dim), `${estimator.name} by depth`);
  }
  // With a leaf weighting the direction is the gradient of the samples that weighting gives the trainer.
  for (const weighting of ['once', 'importance'] as const) {
    const estimator = createTrace({ promptTerm: 'node' });
    const dir = updateDirection(rollout.trees, estimator, prompts, new ScoreGradients(policy), config.engine.maxTurns, weighting);
    const { gradient, metrics } = policy.surrogate(policySamples(estimator, rollout.trees, pool, weighting));
    assertDenseClose(
      toDense(sum(dir.map((d) => d.total)), policy.dim),
      gradient.map((g) => g * metrics.turns),
      weighting,
    );
  }
});

test('the reference is leave-one-out REINFORCE: the surrogate gradient with A = R − mean of the other rollouts, × turns / n', async () => {
  const { parts, policy } = await setup();
  const prompt = parts.train[0]!;
  const { trees } = await runStep({
    prompts: [prompt],
    env: parts.env,
    policy,
    rng: createRng(3),
    rootPlan: new Map([[prompt.id, 12]]),
    settings: config.engine,
  });
  const samples = rewardedLeaves(trees[0]!).map((l) => ({ reward: l.reward!, turns: turnsTo(trees[0]!, l.id) }));
  const n = samples.length;
  const total = samples.reduce((a, s) => a + s.reward, 0);
  assert.ok(total > 0 && total < n, 'mixed outcomes, so the gradient is not zero');
  const loo: PolicySample[] = samples.map((s) => ({ prompt, turns: s.turns, advantages: s.turns.map(() => s.reward - (total - s.reward) / (n - 1)) }));
  const { gradient, metrics } = policy.surrogate(loo);
  const got = baselined(prompt, samples, new ScoreGradients(policy), config.engine.maxTurns);
  assertDenseClose(
    toDense(got.total, policy.dim),
    gradient.map((g) => (g * metrics.turns) / n),
    'reference',
  );
});

test('bootstrap cosines from Gram matrices equal cosines of the re-summed vectors of each draw', () => {
  const rng = createRng(11);
  const vec = (): SparseVec => {
    const s = new SparseSum();
    for (let k = 0; k < 6; k++) s.addAt(rng.int(40), rng.next() - 0.5);
    return s.finish();
  };
  const ref = Array.from({ length: 7 }, vec);
  const other = Array.from({ length: 5 }, vec);
  const arm = aligned(
    ['p0', 'p1', 'p2', 'p3', 'p4', 'p5', 'p6'],
    [0, 2, 3, 6].map((i) => ({ promptId: `p${i}`, v: vec() })),
  );
  const w = resampleWeights(7, 20, 1);
  const v = resampleWeights(5, 20, 2);
  const aa = gram(arm, arm, true);
  const same = new ResampledReference(ref, w).cosines(arm, aa, w);
  const cross = new ResampledReference(other, v).cosines(arm, aa, w);
  const weighted = (xs: readonly SparseVec[], ws: Float64Array) => {
    const s = new SparseSum();
    xs.forEach((x, i) => s.add(x, ws[i]!));
    return s.finish();
  };
  for (let b = 0; b < w.length; b++) {
    assert.ok(Math.abs(same[b]! - cosine(weighted(arm, w[b]!), weighted(ref, w[b]!))) < 1e-12, `same, draw ${b}`);
    assert.ok(Math.abs(cross[b]! - cosine(weighted(arm, w[b]!), weighted(other, v[b]!))) < 1e-12, `disjoint, draw ${b}`);
  }
  assert.ok(
    w.slice(1).some((x) => x.some((c) => c !== 1)),
    'draws resample',
  );
});
