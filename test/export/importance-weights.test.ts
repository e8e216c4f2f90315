/**
 * A run whose strategy draws prompts unevenly (defensive over a pool larger than the budget covers)
 * stores importance weights on its roots; the learner multiplies every leaf's advantages by them.
 * Export must carry them whichever estimator it uses: the stored one, or another recomputed at export.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEstimator, forestFromTrees } from '../../src/advantage/index.ts';
import { buildBatch, storedText } from '../../src/export/index.ts';
import { RunStore } from '../../src/store/index.ts';
import { train } from '../../src/train/index.ts';
import { codepointTokenizer } from '../../src/tokens/index.ts';

test('export with any estimator keeps the importance weights the learner used', async () => {
  const out = join(mkdtempSync(join(tmpdir(), 'trace-weights-')), 'run');
  await train({
    out,
    config: {
      seed: 3,
      steps: 3,
      pool: 64,
      env: { kind: 'world', questions: 120 },
      strategy: { name: 'defensive', budget: 24 },
      eval: { every: 10, questions: 4 },
    },
    clock: () => 0,
  });
  const store = RunStore.open(out, { readonly: true });
  const trees = store.trees(2);
  const records = store.treeRecords(2);
  store.close();
  const weights = new Map(trees.map((t) => [t.promptId, t.nodes[t.promptId]!.weight ?? 1]));
  assert.ok(
    [...weights.values()].some((w) => Math.abs(w - 1) > 0.03),
    'the run drew prompts unevenly (some weight is not 1)',
  );
  for (const name of ['grpo', 'tree-grpo', 'trace'] as const) {
    const { render, estimator } = storedText(trees, records, 'run step 2', name);
    const batch = buildBatch(trees, { tokenizer: codepointTokenizer, render, step: 2, estimator });
    const raw = createEstimator(name, { scale: records[0]!.advantages.scale }).estimate(forestFromTrees(trees));
    const rawOf = new Map(raw.map((a) => [a.id, a]));
    let weighted = 0;
    for (const row of batch.rows) {
      const w = weights.get(row.prompt_id)!;
      const expected = rawOf.get(row.leaf_id)!.advantage * w;
      assert.ok(Math.abs(row.advantage - expected) < 1e-12, `${name} ${row.leaf_id}: ${row.advantage} vs ${expected} (weight ${w})`);
      if (Math.abs(w - 1) > 0.03 && rawOf.get(row.leaf_id)!.advantage !== 0) weighted++;
    }
    assert.ok(weighted > 0, `${name}: some exported advantage carries a weight`);
  }
});
