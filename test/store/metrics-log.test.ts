/**
 * The metrics stream beside the store: metrics.jsonl (one object per step) and metrics.csv (long
 * form) hold exactly the stored metrics, a step's line is there as soon as the step is stored (not at
 * the end of the run), and a resumed run continues both from the store.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { METRICS_CSV, METRICS_JSONL, RunStore } from '../../src/store/index.ts';
import { train } from '../../src/train/index.ts';

const CONFIG = { steps: 3, pool: 4, strategy: { name: 'grpo', budget: 8 }, env: { questions: 100 }, eval: { every: 5, questions: 5 }, policy: { warmStart: 'none' } };

const jsonl = (dir: string) => readFileSync(join(dir, METRICS_JSONL), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, number>);

/** metrics.csv back into per-step objects. */
function csv(dir: string): Map<number, Record<string, number>> {
  const [header, ...lines] = readFileSync(join(dir, METRICS_CSV), 'utf8').trim().split('\n');
  assert.equal(header, 'step,metric,value');
  const out = new Map<number, Record<string, number>>();
  for (const line of lines) {
    const [step, key, value] = line.split(',');
    const row = out.get(Number(step)) ?? {};
    row[key!] = Number(value);
    out.set(Number(step), row);
  }
  return out;
}

function stored(dir: string) {
  const store = RunStore.open(dir, { readonly: true });
  try {
    return store.steps().map((s) => ({ step: s.step, ...s.metrics }));
  } finally {
    store.close();
  }
}

test('metrics.jsonl and metrics.csv hold the stored metrics, each step as soon as it is stored; resume continues them', async () => {
  const out = join(mkdtempSync(join(tmpdir(), 'trace-metrics-')), 'run');
  const seenAtStep: number[] = [];
  await train({
    out,
    config: CONFIG,
    clock: () => performance.now(),
    onEvent: (e) => {
      if (e.kind === 'step') seenAtStep.push(jsonl(out).length);
    },
  });
  assert.deepEqual(seenAtStep, [1, 2, 3], 'the line of step N is written when step N is stored');
  const rows = stored(out);
  assert.deepEqual(jsonl(out), rows);
  assert.ok('test_accuracy' in rows[0]! && !('test_accuracy' in rows[1]!), 'an evaluation key appears on its steps only (0 and the last)');
  const fromCsv = csv(out);
  for (const r of rows) {
    const { step, ...metrics } = r;
    assert.deepEqual(fromCsv.get(step), metrics);
  }

  await train({ out, resume: true, steps: 4, clock: () => performance.now() });
  const after = stored(out);
  assert.equal(after.length, 4);
  assert.deepEqual(jsonl(out), after, 'the resumed run continues the stream, the earlier steps once each');
  assert.equal(csv(out).size, 4);
});

test('a run whose start fails leaves no metrics files behind', async () => {
  const out = join(mkdtempSync(join(tmpdir(), 'trace-metrics-')), 'bad');
  await assert.rejects(train({ out, config: { ...CONFIG, policy: { kind: 'tiny-lm', model: '/nonexistent.gguf' } }, clock: () => performance.now() }));
  assert.ok(!existsSync(join(out, METRICS_JSONL)) && !existsSync(join(out, METRICS_CSV)));
});
