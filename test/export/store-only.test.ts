/**
 * Export and report read the store alone: each tree's rendered prompt and its advantages are stored
 * with the step, so a run whose environment kind is not registered here and whose model file is gone
 * still exports the same rows and still reports. A run stored before tree records existed is refused
 * with what to do.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { ExportError, exportRun } from '../../src/export/index.ts';
import { writeReport } from '../../src/report/index.ts';
import { RunStore, RUN_DB } from '../../src/store/index.ts';
import { smallRun } from './fixtures.ts';

/** A copy of the fixture run whose environment and policy cannot be built here. */
async function strandedCopy(root: string): Promise<string> {
  const run = await smallRun();
  const moved = join(root, 'moved');
  cpSync(run.dir, moved, { recursive: true });
  const store = RunStore.open(moved);
  store.updateConfig({ ...(store.config() as object), env: { kind: 'no-such-kind' }, policy: { kind: 'tiny-lm', model: join(root, 'no-such-model.gguf') } });
  store.close();
  return moved;
}

test('a run whose environment kind is unknown and whose model is gone exports the same verl and TRL rows', async () => {
  const run = await smallRun();
  const root = mkdtempSync(join(tmpdir(), 'trace-export-store-'));
  const moved = await strandedCopy(root);
  for (const format of ['jsonl', 'trl-jsonl'] as const) {
    const [want, got] = [join(root, `want-${format}.jsonl`), join(root, `got-${format}.jsonl`)];
    await exportRun({ dir: run.dir, format, out: want });
    await exportRun({ dir: moved, format, out: got });
    assert.equal(readFileSync(got, 'utf8'), readFileSync(want, 'utf8'), format);
  }
  const rows = readFileSync(join(root, 'got-jsonl.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { prompt_id: string; prompt_text: string });
  const tree = new Map(run.trees.map((t) => [t.promptId, t]));
  for (const r of rows) assert.equal(r.prompt_text, run.render(tree.get(r.prompt_id)!), 'the stored prompt is what the environment rendered');
});

test('the same stranded run reports as HTML', async () => {
  const root = mkdtempSync(join(tmpdir(), 'trace-report-store-'));
  const moved = await strandedCopy(root);
  const out = join(root, 'report.html');
  await writeReport({ runs: [moved], out });
  assert.ok(existsSync(out));
  assert.match(readFileSync(out, 'utf8'), /<svg/);
});

test('a run stored before tree records is refused with what to do', async () => {
  const root = mkdtempSync(join(tmpdir(), 'trace-export-old-'));
  const old = await strandedCopy(root);
  const db = new Database(join(old, RUN_DB));
  db.exec('DROP TABLE tree_records');
  db.close();
  await assert.rejects(
    exportRun({ dir: old, format: 'jsonl', out: join(root, 'rows.jsonl') }),
    (e: Error) => e instanceof ExportError && /predates stored prompts/.test(e.message) && /run it again/.test(e.message),
  );
});
