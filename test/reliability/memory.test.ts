/**
 * Resource bounds: the training loop hands each step's trees to the store and keeps none of them —
 * after a run, every step's trees are garbage (checked with WeakRefs after a forced GC). The heap over
 * a long run is measured by bench/reliability/soak.ts (other state, e.g. per-prompt history, grows
 * legitimately with the prompts seen, so a heap-size bound here would test the wrong thing).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { RunStore, type StepRecord } from '../../src/store/index.ts';
import { train } from '../../src/train/index.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

test('no step’s trees stay in memory after they are stored', async () => {
  const refs: Array<WeakRef<object>> = [];
  const write = RunStore.prototype.writeStep;
  RunStore.prototype.writeStep = function (this: RunStore, record: StepRecord) {
    for (const t of record.trees) refs.push(new WeakRef(t));
    return write.call(this, record);
  };
  try {
    const dir = join(mkdtempSync(join(tmpdir(), 'trace-mem-')), 'run');
    await train({
      out: dir,
      config: {
        steps: 16,
        pool: 16,
        strategy: { name: 'trace', budget: 32 },
        env: { questions: 300 },
        eval: { every: 100, questions: 10 },
        predictor: { kind: 'beta' },
      },
      clock: () => 0,
    });
    const s = RunStore.open(dir, { readonly: true });
    assert.equal(s.steps().length, 16);
    s.close();
  } finally {
    RunStore.prototype.writeStep = write;
  }
  // WeakRef targets survive until the current job ends: let it end, then collect.
  await new Promise((r) => setImmediate(r));
  gc();
  assert.ok(refs.length >= 16, `${refs.length} trees were stored`);
  const alive = refs.filter((r) => r.deref() !== undefined).length;
  assert.equal(alive, 0, `${alive} of ${refs.length} stored trees are still reachable`);
});
