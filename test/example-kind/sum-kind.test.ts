/**
 * Adding an environment kind is one folder and one registration: the `sum` kind of this folder passes
 * the Environment contract, its settings are checked like a built-in kind's, it runs through `train`
 * and `trace-rl eval` with nothing else changed, and its own metric and scripted policy are used there.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedPolicy, registerEnvKind } from '../../src/policy/index.ts';
import { RunStore } from '../../src/store/index.ts';
import { parseTrainConfig, train } from '../../src/train/index.ts';
import { environmentContract } from '../contracts/environment.ts';
import { runCli } from '../reliability/cli-in-process.ts';
import { SumEnv, sumKind, sumPolicies, sumPrompts } from './sum-env.ts';

registerEnvKind(sumKind, sumPolicies);

const setup = await sumKind.build({ kind: 'sum', seed: 1, questions: 20 }, { maxTurns: 3 });
environmentContract('sum (the example kind)', {
  make: () => new SumEnv(3),
  prompts: sumPrompts(1, 5),
  policy: new EmbeddedPolicy({ candidates: setup.candidates! }),
});

test('the example kind is a kind of the configuration: its settings are checked, another kind’s are refused on their path', () => {
  assert.deepEqual(parseTrainConfig({ env: { kind: 'sum' } }).env, { kind: 'sum', seed: 0, questions: 100 });
  assert.throws(() => parseTrainConfig({ env: { kind: 'sum', topK: 3 } }), /config\.env\.topK: "topK" is not a setting of env\.kind sum \(world, qa take it\)/);
});

test('the example kind trains (train) and evaluates (trace-rl eval) like a built-in one', async () => {
  const root = mkdtempSync(join(tmpdir(), 'trace-rl-sum-kind-'));
  try {
    const out = join(root, 'run');
    const config = {
      env: { kind: 'sum', questions: 60 },
      steps: 2,
      pool: 8,
      strategy: { name: 'grpo', budget: 16 },
      eval: { every: 1, questions: 6 },
      engine: { maxTurns: 3 },
    };
    const outcome = await train({ out, config, clock: () => 0 });
    assert.equal(outcome.status, 'finished');
    const store = RunStore.open(out, { readonly: true });
    const steps = store.steps();
    store.close();
    assert.equal(steps.length, 2);
    assert.ok(
      steps.every((s) => typeof s.metrics.test_accuracy === 'number'),
      'every step evaluates the held-out sums',
    );

    const evaluated = await runCli(['eval', '--policy', 'embedded', '--run', out, '--out', join(root, 'eval'), '--json', '--quiet']);
    assert.equal(evaluated.code, 0, evaluated.stderr);
    const result = JSON.parse(evaluated.stdout) as { datasets: Record<string, { n: number; off_by_one: number }> };
    assert.deepEqual(Object.keys(result.datasets), ['sum']);
    assert.equal(result.datasets.sum!.n, 12);
    assert.equal(typeof result.datasets.sum!.off_by_one, 'number', 'the kind’s own metric is a column');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('the example kind’s scripted policy is what policy scripted means there, and its metric counts its near misses', async () => {
  const root = mkdtempSync(join(tmpdir(), 'trace-rl-sum-scripted-'));
  try {
    const evaluated = await runCli([
      'eval',
      '--policy',
      'scripted',
      '--env',
      'sum',
      '--questions',
      '20',
      '--samples',
      '8',
      '--temperature',
      '1',
      '--out',
      join(root, 'eval'),
      '--json',
      '--quiet',
    ]);
    assert.equal(evaluated.code, 0, evaluated.stderr);
    const sum = (JSON.parse(evaluated.stdout) as { datasets: Record<string, { accuracy: number; off_by_one: number }> }).datasets.sum!;
    // One answer in four is one too many: accuracy and off_by_one add up to 1.
    assert.ok(sum.off_by_one > 0.1 && sum.off_by_one < 0.4, `off_by_one ${sum.off_by_one}`);
    assert.ok(Math.abs(sum.accuracy + sum.off_by_one - 1) < 1e-9);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
