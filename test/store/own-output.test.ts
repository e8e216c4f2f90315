/**
 * `export A --out B/run.sqlite` replaced another run's database with rows and exited 0 (the run-file
 * check only knows the runs on the command line). export and report now replace only a file they wrote
 * themselves (a rerun's output); any other existing file, reached directly or through a symlink, is
 * refused with one line naming it, exit 2, and is left as it was.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { smallRun } from '../export/fixtures.ts';
// export and report run through the real CLI in this process: what is proven is which files they replace.
import { runCli } from '../reliability/cli-in-process.ts';

const digest = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

test('export and report never replace a file they did not write: another run’s database, notes, through a symlink', async () => {
  const run = await smallRun();
  const work = mkdtempSync(join(tmpdir(), 'trace-foreign-'));
  const other = join(work, 'other-run');
  cpSync(run.dir, other, { recursive: true });
  const otherDb = join(other, 'run.sqlite');
  const notes = join(work, 'notes.txt');
  writeFileSync(notes, 'my notes\n');
  const link = join(work, 'link.parquet');
  symlinkSync(otherDb, link);
  const before = new Map([otherDb, notes].map((f) => [f, digest(f)]));
  for (const out of [otherDb, notes, link]) {
    for (const args of [
      ['export', run.dir, '--format', 'verl', '--out', out],
      ['export', run.dir, '--format', 'jsonl', '--out', out],
      ['report', run.dir, '--out', out],
    ]) {
      const r = await runCli(args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stdout, '');
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.ok(r.stderr.includes(`--out ${out}`), r.stderr);
      assert.match(
        r.stderr,
        /exists and is not (rows or a prefix trie written by trace-rl export|an HTML report written by trace-rl report); .*choose another --out/,
      );
    }
  }
  for (const [f, d] of before) assert.equal(digest(f), d, `${f} untouched`);
  const reopened = await runCli(['export', other, '--format', 'jsonl', '--out', join(work, 'other.jsonl')]);
  assert.equal(reopened.code, 0, `the other run still reads as a run: ${reopened.stderr}`);
});

test('a rerun replaces its own earlier output (every export form, the report); one command’s output is not the other’s', async () => {
  const run = await smallRun();
  const work = mkdtempSync(join(tmpdir(), 'trace-rerun-'));
  for (const [format, name] of [
    ['verl', 'rows.parquet'],
    ['trl', 'trl.parquet'],
    ['verl', 'rows.jsonl'],
    ['trl-jsonl', 'trl.jsonl'],
    ['trie', 'trie.jsonl'],
  ]) {
    const out = join(work, name);
    for (let i = 0; i < 2; i++) {
      const r = await runCli(['export', run.dir, '--format', format, '--out', out]);
      assert.equal(r.code, 0, `export --format ${format} --out ${name} (run ${i + 1}): ${r.stderr}`);
    }
  }
  // Another export form over an export file is still the export's own file.
  const swapped = await runCli(['export', run.dir, '--format', 'trie', '--out', join(work, 'rows.jsonl')]);
  assert.equal(swapped.code, 0, swapped.stderr);
  const page = join(work, 'page.html');
  for (let i = 0; i < 2; i++) {
    const r = await runCli(['report', run.dir, '--out', page]);
    assert.equal(r.code, 0, `report (run ${i + 1}): ${r.stderr}`);
  }
  const exportOverReport = await runCli(['export', run.dir, '--format', 'verl', '--out', page]);
  assert.equal(exportOverReport.code, 2, exportOverReport.stderr);
  const reportOverRows = await runCli(['report', run.dir, '--out', join(work, 'rows.parquet')]);
  assert.equal(reportOverRows.code, 2, reportOverRows.stderr);
});
