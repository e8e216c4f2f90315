import assert from 'node:assert/strict';
import { test } from 'node:test';
import { arms, BEST_TRACE, DEFAULT_SCALE, ROOT_RESAMPLE_TRACE, runConfig, UNIFORM_ROOT_TRACE } from '../../bench/compare/experiments.ts';
import { parseTrainConfig } from '../../src/train/index.ts';

// bench/compare's `tinylm` experiment (issue 18): every arm is a valid train() configuration on the tiny
// LM with the same model, learner and engine settings, and the same budget; only the strategy differs.
test('tinylm experiment: every arm is the tiny LM from the committed warm start at equal B', () => {
  const scale = { ...DEFAULT_SCALE, firstSeed: 100, steps: 40, pool: 32, budget: 16, evalEvery: 10, evalQuestions: 300, cheapPredictorForBaselines: true };
  const list = arms('tinylm');
  assert.deepEqual(list.map((a) => a.label), ['trace-best', 'grpo', 'random-tree', 'trace']);
  assert.deepEqual(list.map((a) => a.tier ?? 0), [0, 0, 1, 2]);
  const configs = list.map((a) => parseTrainConfig(runConfig(a, 100, scale)));
  for (const c of configs) {
    assert.equal(c.policy.kind, 'tiny-lm');
    assert.equal(c.policy.model, 'bench/tinylm/warm-start-d64x4.gguf');
    assert.equal(c.policy.learningRate, 3e-4);
    assert.equal(c.policy.epochs, 1);
    assert.equal(c.engine.maxTurns, 6);
    assert.equal(c.engine.concurrency, 8);
    assert.equal(c.strategy.budget, 16);
    assert.deepEqual([c.seed, c.steps, c.pool, c.env.seed, c.env.topK, c.eval.questions], [100, 40, 32, 7, 3, 300]);
    // 1,500 world questions, 20 % held out: the 300 evaluated are the whole test split.
    assert.equal(Math.round(c.env.questions * c.env.testFraction), 300);
  }
  // What ran (frozen at c5d3e8e): decision-weighted prefixes, leftover over the pool.
  const best = configs[0].strategy as Record<string, unknown>;
  assert.deepEqual([best.name, best.prefixes, best.leftover, best.roots], ['trace', 'decision-weighted', 'pool', undefined]);
  assert.deepEqual(BEST_TRACE, { name: 'trace', prefixes: 'decision-weighted', leftover: 'pool' });
  assert.equal(configs[3].strategy.name, 'trace');
  assert.equal((configs[3].strategy as Record<string, unknown>).prefixes, undefined);
  // The arms that never read Ṽ get the running-rate predictor; the trace arms keep the MLP.
  assert.deepEqual(configs.map((c) => c.predictor.kind), ['mlp', 'global', 'global', 'mlp']);
});

// `tinylm-d`: the same comparison from the longer warm start; only the model file differs from tinylm's
// settings, and the tree arm is the recommendation (uniform roots, decision-weighted prefixes).
test('tinylm-d experiment: the recommendation, grpo, random-tree and the paper from warm-start-d64x4d at equal B', () => {
  const scale = { ...DEFAULT_SCALE, firstSeed: 700, steps: 40, pool: 32, budget: 16, evalEvery: 10, evalQuestions: 300, cheapPredictorForBaselines: true };
  const list = arms('tinylm-d');
  assert.deepEqual(list.map((a) => a.label), ['trace-rec', 'grpo', 'random-tree', 'trace']);
  assert.deepEqual(list.map((a) => a.tier ?? 0), [0, 0, 1, 2]);
  const configs = list.map((a) => parseTrainConfig(runConfig(a, 700, scale)));
  const old = parseTrainConfig(runConfig(arms('tinylm')[1], 700, scale));
  for (const c of configs) {
    assert.equal(c.policy.model, 'bench/tinylm/warm-start-d64x4d.gguf');
    assert.deepEqual({ ...c.policy, model: old.policy.model }, old.policy);
    assert.deepEqual(c.engine, old.engine);
    assert.equal(c.strategy.budget, 16);
    assert.deepEqual([c.seed, c.steps, c.pool, c.env.seed, c.eval.questions], [700, 40, 32, 7, 300]);
  }
  assert.deepEqual(UNIFORM_ROOT_TRACE, { name: 'trace', roots: 'uniform', prefixes: 'decision-weighted' });
  const rec = configs[0].strategy as Record<string, unknown>;
  assert.deepEqual([rec.name, rec.roots, rec.prefixes], ['trace', 'uniform', 'decision-weighted']);
  assert.equal((configs[3].strategy as Record<string, unknown>).prefixes, undefined);
  assert.deepEqual(configs.map((c) => c.predictor.kind), ['mlp', 'global', 'global', 'mlp']);
});

// `tinylm-s` (frozen at e7b19e9): B = 64 from the 34 % warm start with Adam 2e-4, read on sampled held-out
// success; only the strategy differs between arms, and the tree arm is ROOT_RESAMPLE_TRACE as written then.
test('tinylm-s experiment: the recommendation, grpo as 16 × 4, random-tree and the paper at B = 64 with sampled evaluation', () => {
  const scale = { ...DEFAULT_SCALE, firstSeed: 900, steps: 40, pool: 32, budget: 64, evalEvery: 20, evalQuestions: 300, evalSamples: 2, cheapPredictorForBaselines: true };
  const list = arms('tinylm-s');
  assert.deepEqual(list.map((a) => a.label), ['trace-rec', 'grpo', 'random-tree', 'trace']);
  assert.deepEqual(list.map((a) => a.tier ?? 0), [0, 0, 1, 2]);
  const configs = list.map((a) => parseTrainConfig(runConfig(a, 900, scale)));
  for (const c of configs) {
    assert.deepEqual([c.policy.kind, c.policy.model, c.policy.learningRate, c.policy.epochs, c.policy.temperature], ['tiny-lm', 'bench/tinylm/warm-start-d64x4d.gguf', 2e-4, 1, 1]);
    assert.deepEqual([c.engine.maxTurns, c.engine.concurrency], [6, 8]);
    assert.equal(c.strategy.budget, 64);
    assert.deepEqual([c.seed, c.steps, c.pool, c.env.seed, c.env.questions, c.eval.every, c.eval.questions, c.eval.samples], [900, 40, 32, 7, 1500, 20, 300, 2]);
  }
  assert.deepEqual(ROOT_RESAMPLE_TRACE, { name: 'trace', roots: 'uniform', prefixes: 'decision-weighted', rootResample: true, continuations: 0.5 });
  const rec = configs[0].strategy as Record<string, unknown>;
  assert.deepEqual([rec.roots, rec.prefixes, rec.rootResample, rec.continuations], ['uniform', 'decision-weighted', true, 0.5]);
  assert.equal((configs[1].strategy as Record<string, unknown>).batchSize, 16);
  assert.equal((configs[3].strategy as Record<string, unknown>).prefixes, undefined);
  assert.deepEqual(configs.map((c) => c.predictor.kind), ['mlp', 'global', 'global', 'mlp']);
  // Without --eval-samples the configuration carries no samples (greedy only), as every earlier experiment.
  assert.equal(parseTrainConfig(runConfig(list[1], 900, { ...scale, evalSamples: undefined })).eval.samples, 0);
});
