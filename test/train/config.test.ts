import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { configReference, DEFAULT_STRATEGY, parseTrainConfig } from '../../src/train/index.ts';

test('docs/configuration.md is the schema’s own reference (regenerate with trace-rl config --docs)', () => {
  const docs = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
  assert.equal(docs, configReference());
});

test('a partial strategy is completed from the defaults; unknown strategy options fail', () => {
  const c = parseTrainConfig({ strategy: { name: 'grpo' } });
  assert.equal(c.strategy.name, 'grpo');
  assert.equal(c.strategy.budget, 192);
  assert.throws(() => parseTrainConfig({ strategy: { name: 'trace', budgte: 3 } }), /budgte/);
});

test('a negative N is one error on strategy.continuations, not also a budget computed from it', () => {
  assert.throws(
    () => parseTrainConfig({ strategy: { name: 'trace', continuations: -1 } }),
    (e: Error) => /config\.strategy\.continuations: Too small/.test(e.message) && !/strategy\.budget/.test(e.message),
  );
  assert.deepEqual(parseTrainConfig({ strategy: { name: 'trace', preset: 'paper', continuations: 0.5 } }).strategy, {
    name: 'trace',
    preset: 'paper',
    unit: 'trajectories',
    budget: 192,
    continuations: 0.5,
    min: 2,
    max: 16,
  });
});

test('trace presets: a config naming trace runs the recommended preset, explicit options win, paper is the published method; stored configs keep their meaning', () => {
  const recommended = {
    name: 'trace',
    preset: 'recommended',
    unit: 'trajectories',
    budget: 192,
    min: 2,
    max: 16,
    roots: 'uniform',
    rootResample: true,
    continuations: 0.5,
    branchFrom: 2,
  };
  assert.deepEqual(parseTrainConfig({ strategy: { name: 'trace' } }).strategy, recommended);
  assert.deepEqual(
    parseTrainConfig({}).strategy,
    parseTrainConfig({ strategy: { name: DEFAULT_STRATEGY.name } }).strategy,
    'the default strategy is the same with or without its name',
  );
  assert.deepEqual(parseTrainConfig({ strategy: { name: 'trace', continuations: 1 } }).strategy, { ...recommended, continuations: 1 });
  assert.deepEqual(parseTrainConfig({ strategy: { name: 'trace', preset: 'paper' } }).strategy, {
    name: 'trace',
    preset: 'paper',
    unit: 'trajectories',
    budget: 192,
    continuations: 2,
    min: 2,
    max: 16,
  });
  // A run stored before presets holds no preset: it meant the paper, and reads back so.
  const old = { strategy: { name: 'trace', unit: 'trajectories', budget: 48, continuations: 2, min: 2, max: 16 } };
  assert.deepEqual(parseTrainConfig(old, { stored: true }).strategy, { ...old.strategy, preset: 'paper' });
  // A stored recommended run reads back identical (its preset's fields are stored explicitly).
  const stored = parseTrainConfig({ strategy: { name: 'trace' } });
  assert.deepEqual(parseTrainConfig(stored, { stored: true }).strategy, stored.strategy);
  assert.throws(() => parseTrainConfig({ strategy: { name: 'trace', preset: 'best' } }), /config\.strategy\.preset/);
  // The recommended preset has uniform roots, so a root-solver option beside it asks to choose.
  assert.throws(() => parseTrainConfig({ strategy: { name: 'trace', leftover: 'pool' } }), /leftover: pool steers the root solver/);
});

test('options of another strategy are rejected on their own field path, naming who takes them', () => {
  assert.throws(() => parseTrainConfig({ strategy: { name: 'trace', knapsackPrior: 5 } }), /config\.strategy\.knapsackPrior: .*apply to knapsack only/);
  assert.throws(() => parseTrainConfig({ strategy: { name: 'grpo', continuations: 2 } }), /config\.strategy\.continuations: .*not an option of strategy grpo/);
  assert.throws(() => parseTrainConfig({ strategy: { name: 'pcl', roots: 'uniform' } }), /config\.strategy\.roots/);
  // A tree strategy's own defaults are filled in; a root-only one gets none of them.
  assert.deepEqual(parseTrainConfig({ strategy: { name: 'grpo' } }).strategy, { name: 'grpo', unit: 'trajectories', budget: 192 });
  assert.equal(parseTrainConfig({ strategy: { name: 'random-tree' } }).strategy.name, 'random-tree');
});

test('the default strategy is defensive (systematic draws, weight 1 where the budget covers the pool); stored configs without one meant the paper’s trace', () => {
  assert.equal(DEFAULT_STRATEGY.name, 'defensive');
  const expected = { name: 'defensive', unit: 'trajectories', budget: 192, explore: 0.25, draws: 'systematic' };
  assert.deepEqual(parseTrainConfig({}).strategy, expected);
  assert.deepEqual(parseTrainConfig({ strategy: {} }).strategy, expected, 'a strategy without a name takes the default name');
  assert.deepEqual(parseTrainConfig({ strategy: { budget: 48 } }).strategy, { ...expected, budget: 48 });
  // Runs stored while trace was the default, with no strategy or no name, read back as what they ran.
  const paper = { name: 'trace', preset: 'paper', unit: 'trajectories', budget: 192, continuations: 2, min: 2, max: 16 };
  assert.deepEqual(parseTrainConfig({}, { stored: true }).strategy, paper);
  assert.deepEqual(parseTrainConfig({ strategy: { budget: 48 } }, { stored: true }).strategy, { ...paper, budget: 48 });
  // A stored default run reads back identical.
  const made = parseTrainConfig({});
  assert.deepEqual(parseTrainConfig(made, { stored: true }), made);
});

test('a config stored before per-strategy options (every strategy’s defaults filled in) still reads back', () => {
  const old = { strategy: { name: 'grpo', budget: 48, continuations: 2, min: 2, max: 16, groupSize: 8, knapsackPrior: 1 } };
  assert.throws(() => parseTrainConfig(old), /continuations/);
  assert.deepEqual(parseTrainConfig(old, { stored: true }).strategy, { name: 'grpo', unit: 'trajectories', budget: 48 });
});

test('the arm label is part of the config', () => {
  assert.equal(parseTrainConfig({ arm: 'trace-uniform-roots', strategy: { name: 'trace', roots: 'uniform' } }).arm, 'trace-uniform-roots');
  assert.equal(parseTrainConfig({}).arm, undefined);
});

test('advantageScale: std by default; none for grpo, tree-grpo, trace; refused with treepo on its field', () => {
  assert.equal(parseTrainConfig({}).advantageScale, 'std');
  for (const estimator of ['grpo', 'tree-grpo', 'trace', 'trace-local'] as const)
    assert.equal(parseTrainConfig({ estimator, advantageScale: 'none' }).advantageScale, 'none');
  assert.throws(
    () => parseTrainConfig({ estimator: 'treepo', advantageScale: 'none' }),
    /advantageScale: none applies to grpo, tree-grpo, trace and trace-local/,
  );
  assert.throws(() => parseTrainConfig({ advantageScale: 'mad' }), /advantageScale/);
});

test('policy.temperature: 1 by default for tiny-lm, taken by it, refused on its field for the embedded policy', () => {
  assert.deepEqual(parseTrainConfig({ policy: { kind: 'tiny-lm', model: 'm.gguf' } }).policy, {
    kind: 'tiny-lm',
    model: 'm.gguf',
    learningRate: 0.0003,
    temperature: 1,
    clip: 0.2,
    epochs: 4,
    normalise: 'turns',
    sharedTurns: 'per-leaf',
  });
  assert.deepEqual(parseTrainConfig({ policy: { kind: 'tiny-lm', model: 'm.gguf', temperature: 0.7 } }).policy, {
    kind: 'tiny-lm',
    model: 'm.gguf',
    learningRate: 0.0003,
    temperature: 0.7,
    clip: 0.2,
    epochs: 4,
    normalise: 'turns',
    sharedTurns: 'per-leaf',
  });
  assert.throws(
    () => parseTrainConfig({ policy: { temperature: 0.7 } }),
    /config\.policy\.temperature: "temperature" is not a setting of policy\.kind embedded \(openai, tinker, tiny-lm take it\)/,
  );
  assert.throws(() => parseTrainConfig({ policy: { kind: 'tiny-lm', model: 'm.gguf', temperature: 0 } }), /temperature/);
});

test('predictor: posterior and question templates are settings with defaults; a foreign field fails on its own path', () => {
  const c = parseTrainConfig({});
  assert.equal(c.predictor.kind, 'mlp');
  assert.equal(c.predictor.questionFeatures, 'words');
  assert.deepEqual(c.predictor.posterior, { strength: 4, discount: 1, prefixes: 'none' });
  const p = parseTrainConfig({ predictor: { kind: 'posterior', questionFeatures: 'template', posterior: { strength: 8, discount: 0.9 } } }).predictor;
  assert.deepEqual([p.kind, p.questionFeatures, p.posterior], ['posterior', 'template', { strength: 8, discount: 0.9, prefixes: 'none' }]);
  assert.throws(
    () => parseTrainConfig({ predictor: { kind: 'posterior', posterior: { strenght: 8 } } }),
    /config\.predictor\.posterior\.strenght: unknown setting "strenght"/,
  );
  assert.throws(() => parseTrainConfig({ predictor: { hiden: [8] } }), /config\.predictor\.hiden: unknown setting/);
  assert.throws(() => parseTrainConfig({ predictor: { posterior: { discount: 0 } } }), /config\.predictor\.posterior\.discount/);
  assert.throws(() => parseTrainConfig({ predictor: { questionFeatures: 'names' } }), /config\.predictor\.questionFeatures/);
});
