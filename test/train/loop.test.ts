import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { RunStore } from '../../src/store/index.ts';
import { ConfigError, METRIC_KEYS, parseTrainConfig, train } from '../../src/train/index.ts';
import { leaves } from '../../src/tree/index.ts';

const small = { steps: 4, pool: 16, strategy: { name: 'trace', budget: 48 }, env: { questions: 300 }, eval: { every: 2, questions: 40 } };
const clock = () => performance.now();
const tmp = () => mkdtempSync(join(tmpdir(), 'trace-train-'));

test('a short TRACE run on the embedded world stores every step with the registered metrics', async () => {
  const dir = join(tmp(), 'run');
  const outcome = await train({ out: dir, config: small, clock });
  assert.equal(outcome.status, 'finished');
  assert.equal(outcome.completed, 4);
  const s = RunStore.open(dir);
  const steps = s.steps();
  assert.equal(steps.length, 4);
  for (const st of steps) {
    for (const k of Object.keys(st.metrics)) assert.ok(METRIC_KEYS.has(k), `metric ${k} is in the registry`);
    assert.equal(st.metrics.cost_trajectories, 48, 'trace spends exactly its budget (leftover continuation budget tops up bare rollouts)');
    const trees = s.trees(st.step);
    const leafCount = trees.reduce((n, t) => n + leaves(t).length, 0);
    assert.equal(leafCount, st.metrics.cost_trajectories, 'every trajectory the ledger counted is a leaf in a stored tree');
    assert.ok(st.metrics.effective_ratio >= 0 && st.metrics.effective_ratio <= 1);
  }
  assert.ok(
    steps.some((st) => st.metrics.expanded_prefixes > 0),
    'trace expands some prefixes',
  );
  assert.ok('test_accuracy' in steps[0].metrics && 'test_accuracy' in steps[3].metrics);
  assert.equal(s.status(), 'finished');
  s.close();
  const again = await train({ out: dir, resume: true, clock });
  assert.equal(again.status, 'already-finished', 'a finished run says so instead of silently doing nothing');
  // The report reads what the loop stores: a real run must leave no chart without data.
  const { writeReport } = await import('../../src/report/index.ts');
  const report = await writeReport({ runs: [dir], out: join(dir, 'report.html') });
  assert.deepEqual(
    report.notes.filter((n) => !/seed/.test(n)),
    [],
  );
});

test('eval.samples > 0 logs the sampled held-out success beside the greedy one, only at evaluation steps', async () => {
  const dir = join(tmp(), 'run');
  await train({ out: dir, config: { ...small, steps: 2, eval: { every: 5, questions: 30, samples: 2 } }, clock });
  const s = RunStore.open(dir, { readonly: true });
  const [first, last] = s.steps();
  s.close();
  for (const m of [first.metrics, last.metrics]) {
    // 30 questions × 2 samples: a count over 60.
    assert.ok(Number.isInteger(Math.round(m.test_accuracy_sampled * 60 * 1e9) / 1e9), `${m.test_accuracy_sampled} is k/60`);
    assert.ok('test_accuracy' in m);
  }
  const plain = join(tmp(), 'run');
  await train({ out: plain, config: { ...small, steps: 1, eval: { every: 5, questions: 30 } }, clock });
  const p = RunStore.open(plain, { readonly: true });
  assert.ok(!('test_accuracy_sampled' in p.steps()[0].metrics), 'off by default');
  p.close();
  // The report draws its learning curves only where a run logged it, and leaves no chart empty.
  const { writeReport } = await import('../../src/report/index.ts');
  const title = 'test_accuracy_sampled against cum_trajectories';
  const withSamples = await writeReport({ runs: [dir], out: join(dir, 'report.html') });
  assert.ok(readFileSync(withSamples.out, 'utf8').includes(title));
  assert.deepEqual(
    withSamples.notes.filter((n) => !/seed/.test(n)),
    [],
  );
  const without = await writeReport({ runs: [plain], out: join(plain, 'report.html') });
  assert.ok(!readFileSync(without.out, 'utf8').includes(title));
});

// kill -9 and resume: test/reliability/crash.test.ts kills at random moments, repeatedly, through the CLI.

test('a bad configuration names the field and the allowed values, and starts nothing', async () => {
  assert.throws(
    () => parseTrainConfig({ strategy: { name: 'tracee' } }),
    (e: Error) => e instanceof ConfigError && /config\.strategy\.name/.test(e.message) && /"trace"/.test(e.message),
  );
  assert.throws(() => parseTrainConfig({ steps: 0 }), /config\.steps/);
  assert.throws(() => parseTrainConfig({ stpes: 3 }), /stpes/);
  const dir = join(tmp(), 'never');
  const bin = new URL('../../bin/trace-rl.js', import.meta.url).pathname;
  const r = spawnSync(process.execPath, [bin, 'train', '--out', dir, '--estimator', 'ppo'], { encoding: 'utf8' });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /config\.estimator/);
  assert.equal(r.stderr.trim().split('\n').length, 1, 'one line');
  assert.equal(r.stdout, '');
  assert.equal((await import('node:fs')).existsSync(dir), false, 'nothing was written');
});
