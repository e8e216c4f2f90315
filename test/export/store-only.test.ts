/**
 * Export renders prompt text from the run's environment kind and its store alone (issue 32): it used
 * to rebuild the whole training stack (predictor, warm start, or a tiny LM's GGUF and jax-js) just to
 * render text, so a run whose model file had moved could not be exported.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportRun } from '../../src/export/index.ts';
import { RunStore } from '../../src/store/index.ts';
import { smallRun } from './fixtures.ts';

test('a run whose policy model is gone still exports, with the same rows', async () => {
  const run = await smallRun();
  const root = mkdtempSync(join(tmpdir(), 'trace-export-store-'));
  const moved = join(root, 'moved');
  cpSync(run.dir, moved, { recursive: true });
  const store = RunStore.open(moved);
  store.updateConfig({ ...(store.config() as object), policy: { kind: 'tiny-lm', model: join(root, 'no-such-model.gguf') } });
  store.close();
  const [want, got] = [join(root, 'want.jsonl'), join(root, 'got.jsonl')];
  await exportRun({ dir: run.dir, format: 'jsonl', out: want });
  await exportRun({ dir: moved, format: 'jsonl', out: got });
  assert.equal(readFileSync(got, 'utf8'), readFileSync(want, 'utf8'));
});
