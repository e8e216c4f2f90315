/**
 * The oracle's probe on an environment that does not know p (the embedded world): k fresh rollouts of
 * every candidate under the current policy, outside the budget and never trained on, read by the
 * oracle as (1 + s) / (2 + k). Real components: the world, the embedded policy, a real run store.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunStore } from '../../src/store/index.ts';
import { METRIC_KEYS, train } from '../../src/train/index.ts';
import { leaves } from '../../src/tree/index.ts';

const base = { steps: 2, pool: 12, env: { questions: 300 }, eval: { every: 5, questions: 10 } };

test('oracle truthSamples on the world: the probe is outside the budget and stored apart; without it the oracle refuses', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'trace-probe-'));
  try {
    const run = async (name: string, strategy: Record<string, unknown>) => {
      const out = join(dir, name);
      const outcome = await train({ out, config: { ...base, strategy }, clock: () => 0 });
      assert.equal(outcome.status, 'finished');
      const s = RunStore.open(out, { readonly: true });
      const steps = s.steps().map((st) => ({ metrics: st.metrics, trees: s.trees(st.step) }));
      s.close();
      return steps;
    };
    const probed = await run('probed', { name: 'oracle', budget: 24, continuations: 0, truthSamples: 4 });
    for (const { metrics, trees } of probed) {
      for (const k of Object.keys(metrics)) assert.ok(METRIC_KEYS.has(k), `metric ${k} is in the registry`);
      // 12 candidates × 4 probe rollouts, each at least one generated token; none of them is charged or stored.
      assert.ok(metrics.probe_tokens! >= 48, `probe_tokens ${metrics.probe_tokens}`);
      assert.equal(metrics.cost_trajectories, 24, 'the budget pays for the planned rollouts only');
      assert.equal(
        trees.reduce((n, t) => n + leaves(t).length, 0),
        24,
        'the stored trees hold the budget’s rollouts, not the probe’s',
      );
      assert.ok(metrics.time_probe_ms !== undefined);
    }
    // The same oracle without a probe has no evidence on the world and says what it needs.
    await assert.rejects(() => run('exact', { name: 'oracle', budget: 24, continuations: 0 }), /true success probability p of prompt/);
    // Prefixes have no probe: an oracle with continuations on the world says what it needs.
    await assert.rejects(() => run('prefixes', { name: 'oracle', budget: 24, continuations: 1, truthSamples: 4 }), /true success probability p of prefix/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
