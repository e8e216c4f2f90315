import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { beta, runAllocationDemo, summarise } from '../../src/allocate/index.ts';
import { createRng } from '../../src/util/rng.ts';

test('beta sampler has the right mean and variance', () => {
  const rng = createRng(4);
  const xs = Array.from({ length: 20000 }, () => beta(0.5, 2, rng));
  const { mean, sd } = summarise(xs);
  // Beta(0.5, 2): mean 0.2, variance ab / ((a+b)²(a+b+1)) = 1 / (6.25 · 3.5) ≈ 0.0457.
  assert.ok(Math.abs(mean - 0.2) < 0.01, `mean ${mean}`);
  assert.ok(Math.abs(sd * sd - 1 / 21.875) < 0.004, `variance ${sd * sd}`);
});

test('demo: equal cost, deterministic for a seed, and the oracle beats uniform groups', () => {
  const options = { prompts: 128, budget: 512, trials: 30, seed: 3 };
  const a = runAllocationDemo(options);
  assert.deepEqual(runAllocationDemo(options), a);
  for (const row of a.rows) {
    assert.equal(row.rolloutsSpent.mean, 512, `${row.strategy} spends the budget`);
    assert.equal(row.rolloutsSpent.sd, 0);
    assert.ok(row.effectiveRatio.mean >= 0 && row.effectiveRatio.mean <= 1);
  }
  const by = Object.fromEntries(a.rows.map((r) => [r.strategy, r]));
  assert.equal(by.grpo.promptsSelected.mean, 128);
  assert.ok(
    by.oracle.effectiveRatio.mean > by.grpo.effectiveRatio.mean + 0.02,
    `oracle ${by.oracle.effectiveRatio.mean} vs grpo ${by.grpo.effectiveRatio.mean}`,
  );
  // With a perfect predictor trace is the oracle.
  const exact = runAllocationDemo({ ...options, noise: 0, trials: 5 });
  const rows = Object.fromEntries(exact.rows.map((r) => [r.strategy, r]));
  assert.ok(Math.abs(rows.trace.effectiveRatio.mean - rows.oracle.effectiveRatio.mean) < 0.02);
});

test('trace-rl demo-allocate prints a table; bad options exit 2 with a one-line error', () => {
  const bin = fileURLToPath(new URL('../../bin/trace-rl.js', import.meta.url));
  const ok = spawnSync(process.execPath, [bin, 'demo-allocate', '--trials', '3', '--prompts', '32', '--budget', '96'], { encoding: 'utf8' });
  assert.equal(ok.status, 0, ok.stderr);
  for (const name of ['grpo', 'trace', 'oracle', 'effective ratio']) assert.match(ok.stdout, new RegExp(name));
  const bad = spawnSync(process.execPath, [bin, 'demo-allocate', '--trials', 'x'], { encoding: 'utf8' });
  assert.equal(bad.status, 2);
  assert.equal(bad.stdout, '');
  assert.match(bad.stderr, /^trace-rl: --trials: .*\n$/);
});
