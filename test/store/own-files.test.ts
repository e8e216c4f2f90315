/**
 * Issue 31: `export --out RUN/run.sqlite` and `report --out RUN/run.sqlite` exited 0 and replaced the
 * run's database with rows or HTML, so the folder no longer read as a run. An output that resolves to
 * one of the run's own files (directly, through a symlink, or a hard link) is refused, the run untouched.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { linkSync, mkdtempSync, readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { smallRun } from '../export/fixtures.ts';
import { runCli } from '../helpers/run-cli.ts';

const digest = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

test('export and report refuse an --out that is one of the run’s own files; the run still reads as a run', async () => {
  const run = await smallRun();
  const db = join(run.dir, 'run.sqlite');
  const before = digest(db);
  const elsewhere = mkdtempSync(join(tmpdir(), 'trace-own-'));
  const viaSymlink = join(elsewhere, 'link.parquet');
  symlinkSync(db, viaSymlink);
  const viaHardLink = join(elsewhere, 'hard.html');
  linkSync(db, viaHardLink);
  // A relative spelling of the same file, from another working directory's point of view.
  const dotted = join(run.dir, '..', 'run', '.', 'run.sqlite');
  const outs = [db, dotted, viaSymlink, viaHardLink, join(run.dir, 'run.lock')];
  for (const out of outs) {
    const ex = await runCli(['export', run.dir, '--format', 'verl', '--out', out]);
    assert.equal(ex.code, 2, `export --out ${out}: ${ex.stderr}`);
    assert.equal(ex.stderr.trim().split('\n').length, 1, ex.stderr);
    assert.match(ex.stderr, /is one of the run's own files/);
    const rep = await runCli(['report', run.dir, '--out', out]);
    assert.equal(rep.code, 2, `report --out ${out}: ${rep.stderr}`);
    assert.match(rep.stderr, /is one of the run's own files/);
  }
  assert.equal(digest(db), before, 'run.sqlite untouched');
  const ok = await runCli(['export', run.dir, '--format', 'verl', '--out', join(elsewhere, 'rows.parquet')]);
  assert.equal(ok.code, 0, ok.stderr);
  const rep = await runCli(['report', run.dir]);
  assert.equal(rep.code, 0, `the default report.html inside the run is fine: ${rep.stderr}`);
});
