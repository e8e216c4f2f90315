/**
 * A training run with a budget in tokens (issue 33 §2) keeps its prices honest from step to step: the
 * price of a bare rollout is the last step's mean over rollouts that finished, so the budget cuts few
 * trajectories and the plan does not drift. (The first version also averaged the trajectories the cap
 * cut short: the price fell, more roots were planned, more were cut — 438 of 537 by step 28 of a
 * main-scale run.) On the embedded world with its trainable policy, as the main job runs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunStore } from '../../src/store/index.ts';
import { train } from '../../src/train/index.ts';

test('a run at a token budget spends B each step, cuts at most `concurrency` trajectories, and keeps its plan', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'trace-priced-'));
  try {
    const B = 4000;
    const config = {
      env: { kind: 'world', questions: 200 },
      steps: 8,
      pool: 16,
      eval: { every: 100, questions: 8 },
      strategy: { name: 'grpo', unit: 'tokens', budget: B },
      engine: { concurrency: 4 },
    };
    let t = 0;
    const outcome = await train({ out: dir, config, clock: () => t++ });
    assert.equal(outcome.status, 'finished');
    const store = RunStore.open(dir, { readonly: true });
    const steps = store.steps();
    store.close();
    const bare = steps.map((s) => (s.details as { spend: { bare: number } }).spend.bare);
    for (const s of steps) {
      const d = s.details as { spend: { tokens: number }; failures: { budget?: number } };
      assert.ok(d.spend.tokens <= B, `step ${s.step} spent ${d.spend.tokens} > ${B}`);
      // A call is granted only while maxTokensPerTurn (512) tokens are free, so those last 512 are never
      // planned on; beyond them, less than about one trajectory's cost is left.
      assert.ok(d.spend.tokens > B - 512 - 250, `step ${s.step} spent only ${d.spend.tokens} of ${B}`);
      assert.ok((d.failures.budget ?? 0) <= 4, `step ${s.step}: the cap cut ${d.failures.budget} trajectories`);
    }
    // After the first step (planned at the stated prior) the number of rollouts stays put.
    const later = bare.slice(1);
    assert.ok(Math.max(...later) <= 1.5 * Math.min(...later), `bare rollouts per step drift: ${bare.join(', ')}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
