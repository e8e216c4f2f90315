/**
 * The qa environment through the real CLI, end to end: `trace-rl train --env qa` (embedded policy, no
 * server) logs held-out EM/F1 per dataset, and `trace-rl eval --policy embedded --run DIR` evaluates
 * that run's checkpoint on the same held-out questions.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { RunStore } from '../../src/store/index.ts';
import { runCli } from '../helpers/run-cli.ts';

test('train --env qa logs per-dataset held-out metrics; eval --run evaluates its checkpoint', async () => {
  const dir = path.join(mkdtempSync(path.join(tmpdir(), 'qa-train-')), 'run');
  const cache = mkdtempSync(path.join(tmpdir(), 'qa-cache-'));
  const trained = await runCli([
    'train',
    '--env',
    'qa',
    '--datasets',
    'musique,bamboogle:eval',
    '--steps',
    '1',
    '--budget',
    '8',
    '--pool',
    '4',
    '--set',
    'eval.questions=3',
    '--set',
    `env.cacheDir=${cache}`,
    '--out',
    dir,
    '--quiet',
  ]);
  assert.equal(trained.code, 0, trained.stderr);
  const store = RunStore.open(dir, { readonly: true });
  const [step] = store.steps();
  store.close();
  for (const k of ['test_accuracy', 'eval_em/musique', 'eval_f1/musique', 'eval_em/bamboogle', 'eval_f1/bamboogle'])
    assert.equal(typeof step!.metrics[k], 'number', k);
  const evaluated = await runCli([
    'eval',
    '--policy',
    'embedded',
    '--run',
    dir,
    '--questions',
    '3',
    '--set',
    `env.cacheDir=${cache}`,
    '--out',
    path.join(dir, 'eval'),
    '--json',
    '--quiet',
  ]);
  assert.equal(evaluated.code, 0, evaluated.stderr);
  const table = JSON.parse(evaluated.stdout) as { datasets: Record<string, { n: number; em: number; accuracy?: number }> };
  assert.deepEqual(Object.keys(table.datasets), ['musique', 'bamboogle']);
  assert.equal(table.datasets.musique!.n, 3);
  // The run's own greedy evaluation and `trace-rl eval` score the same questions the same way.
  assert.equal(table.datasets.musique!.em, step!.metrics['eval_em/musique']);
  // Its accuracy column is the environment's success reward, the run's test_accuracy (over all datasets).
  const all = table.datasets.musique!.accuracy! * 3 + table.datasets.bamboogle!.accuracy! * 3;
  assert.ok(Math.abs(all / 6 - step!.metrics.test_accuracy!) < 1e-9, `${all / 6} vs ${step!.metrics.test_accuracy}`);
});
