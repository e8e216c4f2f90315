/**
 * The atomic write's temporary file: its name was `<out>.tmp-<pid>`, predictable, and it was opened
 * following links, so a symlink planted at that name made the write land outside the output folder
 * (the data written into the link's target). The name is now random and the file created exclusively
 * without following links. A write that fails on a full disk names the file (write(2) errors carry no
 * path: "ENOSPC: no space left on device, write" said nothing of where).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeFileAtomic } from '../../src/store/atomic-write.ts';
import { MetricsLog } from '../../src/store/metrics-log.ts';
import { smallRun } from '../export/fixtures.ts';
import { runCli } from '../helpers/run-cli.ts';

test('a symlink planted at the old predictable temporary name is neither followed nor removed', () => {
  const work = mkdtempSync(join(tmpdir(), 'trace-atomic-'));
  const outDir = join(work, 'out');
  mkdirSync(outDir);
  const victim = join(work, 'victim.txt');
  writeFileSync(victim, 'precious\n');
  const out = join(outDir, 'rows.jsonl');
  const planted = `${out}.tmp-${process.pid}`;
  symlinkSync(victim, planted);
  writeFileAtomic(out, 'rows\n');
  assert.equal(readFileSync(out, 'utf8'), 'rows\n');
  assert.ok(lstatSync(out).isFile(), 'the output is a plain file, not the planted link');
  assert.equal(readFileSync(victim, 'utf8'), 'precious\n', 'nothing written through the link');
  assert.equal(readlinkSync(planted), victim, 'the planted link is left as it was');
  // Only the output and the planted link: no temporary file is left behind.
  assert.deepEqual(readdirSync(outDir).sort(), ['rows.jsonl', 'rows.jsonl.tmp-' + process.pid]);
  // Two writes use two different temporary names (nothing to predict from one to the next).
  writeFileAtomic(out, 'again\n');
  assert.equal(readFileSync(out, 'utf8'), 'again\n');
});

const mounted: string[] = [];
after(() => {
  for (const d of mounted) spawnSync('umount', [d]);
});

test('a full disk: the one-line error names the file being written', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'trace-fs-'));
  if (spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', dir]).status !== 0)
    return t.skip('cannot mount a tmpfs here (needs root with CAP_SYS_ADMIN)');
  mounted.push(dir);
  // Fill it: the export's open succeeds (tmpfs has inodes left), its write(2) fails.
  spawnSync('dd', ['if=/dev/zero', `of=${join(dir, 'filler')}`, 'bs=4k', 'count=64']);
  const run = await smallRun();
  const out = join(dir, 'rows.parquet');
  const r = await runCli(['export', run.dir, '--format', 'verl', '--out', out]);
  assert.equal(r.code, 2, r.stderr);
  assert.equal(r.stderr, `trace-rl: ${out}: no space left on the device; free some space (a stopped run continues with --resume)\n`);
  assert.deepEqual(readdirSync(dir), ['filler'], 'no temporary file left behind');
});

test('a full disk while appending the metrics stream: the error names the file', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'trace-fs-'));
  if (spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=16k', 'tmpfs', dir]).status !== 0)
    return t.skip('cannot mount a tmpfs here (needs root with CAP_SYS_ADMIN)');
  mounted.push(dir);
  const log = new MetricsLog(dir);
  log.append(0, { a: 1 });
  spawnSync('dd', ['if=/dev/zero', `of=${join(dir, 'filler')}`, 'bs=4k', 'count=16']);
  const big = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`metric_${i}`, i]));
  assert.throws(
    () => log.append(1, big),
    (e: NodeJS.ErrnoException) => e.code === 'ENOSPC' && e.path === join(dir, 'metrics.jsonl'),
  );
});
