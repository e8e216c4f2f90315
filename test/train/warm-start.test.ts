import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runStep } from '../../src/rollout/index.ts';
import { buildComponents, parseTrainConfig, type Components } from '../../src/train/index.ts';
import { leaves } from '../../src/tree/index.ts';
import { createRng } from '../../src/util/rng.ts';
import type { TrainablePolicy } from '../../src/policy/index.ts';

// A small world (200 questions) keeps the behaviour-cloning fit to a few seconds.
const config = (bcSeed: number, policy: Record<string, unknown> = {}) =>
  parseTrainConfig({ seed: 9, env: { questions: 200 }, policy: { bc: { epochs: 40, seed: bcSeed }, ...policy } });
const dirs: string[] = [];
const cacheDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'warm-start-test-'));
  dirs.push(d);
  return d;
};
test.after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const weights = (parts: Components) => (parts.trainable as TrainablePolicy).save();

test('the warm start is deterministic per bc seed, differs across bc seeds, and is cached on disk by its content hash', async () => {
  const [a, b] = [cacheDir(), cacheDir()];
  const first = weights(await buildComponents(config(3), { cacheDir: a }));
  const again = weights(await buildComponents(config(3), { cacheDir: b }));
  assert.deepEqual(first, again, 'two fresh fits with the same seed give the same bytes');
  assert.equal(readdirSync(a).filter((f) => f.endsWith('.bin')).length, 1);
  const cached = weights(await buildComponents(config(3), { cacheDir: a }));
  assert.deepEqual(cached, first);
  assert.equal(readdirSync(a).length, 1, 'a cache hit writes nothing new');
  const other = weights(await buildComponents(config(4), { cacheDir: a }));
  assert.notDeepEqual(other, first);
  assert.equal(readdirSync(a).length, 2, 'another seed is another cache entry');
  await buildComponents(config(3, { bc: { epochs: 41, seed: 3 } }), { cacheDir: a });
  assert.equal(readdirSync(a).length, 3, 'another fit setting is another cache entry');
  const otherRun = weights(
    await buildComponents(parseTrainConfig({ seed: 5, env: { questions: 200 }, policy: { bc: { epochs: 40, seed: 3 } } }), { cacheDir: a }),
  );
  assert.deepEqual(otherRun, first, 'the run seed does not change the warm start (one start shared by every seed)');
  assert.equal(readdirSync(a).length, 3);
});

test('warm-started, the policy searches before it answers and solves some held-out questions; none keeps the cold start', async () => {
  const dir = cacheDir();
  const measure = async (parts: Components) => {
    const prompts = parts.test.slice(0, 40);
    const sampled = await runStep({ prompts, env: parts.env, policy: parts.policy, rng: createRng(1), rootPlan: new Map(prompts.map((p) => [p.id, 2])) });
    const ls = sampled.trees.flatMap((t) => leaves(t));
    const greedy = await runStep({
      prompts,
      env: parts.env,
      policy: parts.policy,
      rng: createRng(1),
      rootPlan: new Map(prompts.map((p) => [p.id, 1])),
      greedy: true,
    });
    const solved = greedy.trees.flatMap((t) => leaves(t)).reduce((s, l) => s + (l.reward ?? 0), 0);
    return { withPrefix: ls.filter((l) => l.depth >= 2).length / ls.length, accuracy: solved / prompts.length };
  };
  const warm = await measure(await buildComponents(config(0), { cacheDir: dir }));
  const cold = await buildComponents(config(0, { warmStart: 'none' }), { cacheDir: dir });
  assert.equal(readdirSync(dir).length, 1, 'warmStart: none neither fits nor reads the cache');
  const coldWeights = new Float64Array(weights(cold).slice(weights(cold).indexOf(10) + 1).buffer);
  assert.ok(
    coldWeights.every((w) => w === 0),
    'the cold start is all-zero weights',
  );
  const coldStats = await measure(cold);
  assert.ok(warm.withPrefix >= 0.7, `warm: ${warm.withPrefix} of rollouts have an intermediate prefix`);
  assert.ok(warm.accuracy > 0.1 && warm.accuracy > coldStats.accuracy, `warm greedy accuracy ${warm.accuracy} vs cold ${coldStats.accuracy}`);
});

test('unknown warm-start settings are rejected', () => {
  assert.throws(() => parseTrainConfig({ policy: { warmStart: 'sft' } }), /warmStart/);
  assert.throws(() => parseTrainConfig({ policy: { bc: { epoch: 3 } } }), /epoch/);
});
