/**
 * examples/config/trace.yaml is a configuration `trace-rl train --config` runs as written (one step
 * here), and every setting it names is one the schema knows; the configuration reference maps the
 * names to TRL's and verl's.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCli } from '../helpers/run-cli.ts';
import { RunStore } from '../../src/store/index.ts';

const EXAMPLE = fileURLToPath(new URL('../../examples/config/trace.yaml', import.meta.url));

test('examples/config/trace.yaml runs with trace-rl train --config (1 step), its settings stored as written', async () => {
  const out = join(mkdtempSync(join(tmpdir(), 'trace-example-config-')), 'run');
  const r = await runCli(['train', '--config', EXAMPLE, '--steps', '1', '--set', 'eval.questions=5', '--out', out, '--quiet']);
  assert.equal(r.code, 0, r.stderr);
  const store = RunStore.open(out, { readonly: true });
  try {
    const c = store.config() as { pool: number; strategy: { name: string; budget: number }; engine: { maxTurns: number }; steps: number };
    assert.deepEqual([c.pool, c.strategy.name, c.strategy.budget, c.engine.maxTurns, c.steps], [16, 'trace', 48, 6, 1]);
    assert.equal(store.lastStep(), 0);
    assert.equal(store.steps()[0]!.metrics.cost_trajectories, 48, 'the step spent the file’s budget');
  } finally {
    store.close();
  }
});

test('the configuration reference maps settings to TRL GRPOConfig and verl names', () => {
  const docs = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
  for (const row of [
    '| `strategy.groupSize` (grpo) | `num_generations` | `actor_rollout_ref.rollout.n`',
    '| `engine.maxTurns` |',
    '| `policy.temperature` | `temperature` | `actor_rollout_ref.rollout.temperature`',
  ])
    assert.ok(docs.includes(row), row);
});
