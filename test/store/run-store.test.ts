import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunStore, RunStoreError } from '../../src/store/index.ts';
import { addTurn, createTree, endTrajectory } from '../../src/tree/index.ts';

function tree(id: string) {
  const t = createTree(id, 'q?');
  const a = addTurn(t, id, { thought: 't', action: { type: 'answer', input: 'x' }, observation: '' }, { origin: 'bare' });
  endTrajectory(t, a.id, 'answer', 1, 1);
  return t;
}

test('a real SQLite run folder stores steps, trees and the latest checkpoints', () => {
  const dir = join(mkdtempSync(join(tmpdir(), 'trace-store-')), 'run');
  const s = RunStore.create(dir, { seed: 3 });
  assert.equal(s.lastStep(), -1);
  s.writeStep({ step: 0, metrics: { reward: 0.5 }, details: {}, trees: [tree('a'), tree('b')], checkpoints: { policy: new Uint8Array([1, 2]) } });
  s.writeStep({ step: 1, metrics: { reward: 0.7 }, details: { x: 1 }, trees: [tree('c')], checkpoints: { policy: new Uint8Array([3]) } });
  s.close();
  const r = RunStore.open(dir);
  assert.deepEqual(r.config(), { seed: 3 });
  assert.equal(r.lastStep(), 1);
  assert.equal(r.status(), 'running');
  assert.deepEqual(
    r.trees(0).map((t) => t.promptId),
    ['a', 'b'],
  );
  assert.deepEqual(r.trees(0)[0], tree('a'));
  assert.deepEqual(r.checkpoints(1), { policy: new Uint8Array([3]) });
  assert.deepEqual(r.checkpoints(0), {}, 'older checkpoints are dropped');
  assert.deepEqual(
    r.steps().map((x) => x.metrics.reward),
    [0.5, 0.7],
  );
  r.markFinished();
  assert.equal(r.status(), 'finished');
  r.close();
  assert.throws(() => RunStore.create(dir, {}), RunStoreError);
});

test('a step that fails half-way leaves nothing behind', () => {
  const dir = join(mkdtempSync(join(tmpdir(), 'trace-store-')), 'run');
  const s = RunStore.create(dir, {});
  const dup = tree('a');
  // Two trees with the same prompt id violate the primary key after the step row was inserted.
  assert.throws(() => s.writeStep({ step: 0, metrics: {}, details: {}, trees: [dup, dup], checkpoints: {} }));
  assert.equal(s.lastStep(), -1);
  assert.deepEqual(s.trees(0), []);
  s.close();
});

test('opening a folder that is not a run says what to do', () => {
  assert.throws(() => RunStore.open(mkdtempSync(join(tmpdir(), 'trace-none-'))), /is .* a run folder/);
});
