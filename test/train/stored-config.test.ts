import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunStore } from '../../src/store/index.ts';
import { CONFIG_REVISION, parseTrainConfig, storedTrainConfig, train } from '../../src/train/index.ts';

/**
 * The default `trace` estimator changed meaning (issue 33: it keeps a prompt-level term). A run made
 * before that stored `estimator: trace` meaning today's `trace-local`; resuming, exporting or analysing
 * it must keep that meaning, while a new run's `trace` stays the new rule.
 */
test('a stored run keeps its estimator meaning what it meant when the run was made', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'trace-rl-stored-config-'));
  try {
    const config = parseTrainConfig({ env: { kind: 'world', questions: 60 }, steps: 1, pool: 8, strategy: { name: 'trace', budget: 12, continuations: 2 } });
    assert.equal(config.estimator, 'trace');
    // A run from before config revisions (no config_revision in its meta).
    const old = RunStore.create(join(dir, 'old'), config);
    assert.equal(old.configRevision(), 1);
    assert.equal(storedTrainConfig(old).estimator, 'trace-local');
    old.close();
    // A run made by today's train records the revision, and its trace stays trace.
    await train({
      out: join(dir, 'new'),
      config: {
        env: { kind: 'world', questions: 60 },
        steps: 1,
        pool: 8,
        strategy: { name: 'trace', budget: 12, continuations: 2 },
        eval: { every: 5, questions: 4 },
      },
      clock: () => 0,
    });
    const made = RunStore.open(join(dir, 'new'), { readonly: true });
    assert.equal(made.configRevision(), CONFIG_REVISION);
    assert.equal(storedTrainConfig(made).estimator, 'trace');
    made.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
