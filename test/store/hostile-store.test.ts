/**
 * Never delete or replace what trace-rl did not create, and one writer per run (issue 19), with real
 * SQLite files, real FIFOs and symlinks, and a second real process for the lock.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { AtomicWriteError, CREATING_MARKER, LOCK_FILE, RUN_DB, RunStore, RunStoreError, writeFileAtomic } from '../../src/store/index.ts';
import { BIN } from '../helpers/run-cli.ts';

const fresh = () => mkdtempSync(join(tmpdir(), 'trace-hostile-'));
const sha = (f: string) => createHash('sha256').update(readFileSync(f)).digest('hex');

/** A finished run with one step, written through the store. */
function finishedRun(dir: string): void {
  const s = RunStore.create(dir, { steps: 1 });
  s.writeStep({ step: 0, metrics: { reward_mean: 0.5 }, details: {}, trees: [], checkpoints: { state: new Uint8Array([1, 2, 3]) } });
  s.markFinished();
  s.close();
}

test('a damaged run is refused by open and by create, and left byte for byte as it was', () => {
  const dir = join(fresh(), 'run');
  finishedRun(dir);
  const file = join(dir, RUN_DB);
  const bytes = readFileSync(file);
  bytes.write('garbage header!!', 0); // the 16-byte SQLite magic
  writeFileSync(file, bytes);
  const before = sha(file);
  assert.throws(
    () => RunStore.open(dir),
    (e: Error) =>
      e instanceof RunStoreError && /does not read as a trace-rl run .* nothing was changed: restore it from a backup, or choose another --out/.test(e.message),
  );
  assert.throws(
    () => RunStore.create(dir, {}),
    (e: Error) => e instanceof RunStoreError && /nothing was changed/.test(e.message),
  );
  assert.equal(sha(file), before);
});

test("another program's SQLite database named run.sqlite is never deleted", () => {
  const dir = fresh();
  const file = join(dir, RUN_DB);
  const db = new Database(file);
  db.exec("CREATE TABLE photos (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO photos (name) VALUES ('holiday')");
  db.close();
  const before = sha(file);
  assert.throws(() => RunStore.create(dir, {}), /does not read as a trace-rl run/);
  assert.throws(() => RunStore.open(dir), /does not read as a trace-rl run/);
  assert.equal(sha(file), before);
});

test('a start interrupted before its first commit (marker present) is replaced by a new start; open says so', () => {
  const dir = fresh();
  writeFileSync(join(dir, CREATING_MARKER), '1\n');
  new Database(join(dir, RUN_DB)).close(); // an empty database: what a kill before the first commit leaves
  assert.throws(() => RunStore.open(dir), /never finished being created .* start the run again with --out/);
  const s = RunStore.create(dir, { steps: 2 });
  s.close();
  assert.equal(existsSync(join(dir, CREATING_MARKER)), false, 'the marker goes once the run is committed');
  const again = RunStore.open(dir, { readonly: true });
  assert.deepEqual(again.config(), { steps: 2 });
  again.close();
});

test('a failed start removes exactly what it created: the folders it made and its files, nothing else', () => {
  const root = fresh();
  const dir = join(root, 'a', 'b');
  const s = RunStore.create(dir, {});
  s.discard();
  assert.equal(existsSync(join(root, 'a')), false);
  // In a folder that already existed (with the user's file), only the run's own files go.
  const own = fresh();
  writeFileSync(join(own, 'notes.txt'), 'mine');
  RunStore.create(own, {}).discard();
  assert.equal(readFileSync(join(own, 'notes.txt'), 'utf8'), 'mine');
  assert.equal(existsSync(join(own, RUN_DB)), false);
  assert.equal(existsSync(join(own, LOCK_FILE)), false);
});

test('paths: through a file (ENOTDIR), under /proc (no endless mkdir), unwritable: one line each, nothing made', () => {
  const root = fresh();
  writeFileSync(join(root, 'file.txt'), 'x');
  assert.throws(() => RunStore.create(join(root, 'file.txt', 'run'), {}), /file\.txt\/run: a part of the path is a file, not a folder/);
  const t = performance.now();
  assert.throws(() => RunStore.create('/proc/trace-rl-x/run', {}), /\/proc\/trace-rl-x\/run: cannot write in \/proc/);
  assert.ok(performance.now() - t < 2000);
  assert.equal(existsSync('/proc/trace-rl-x'), false);
});

test('one writer per run: a second process is told the run is busy, with the PID; a dead holder is taken over', () => {
  const dir = join(fresh(), 'run');
  finishedRun(dir);
  const holder = RunStore.open(dir);
  try {
    const r = spawnSync(process.execPath, [BIN, 'train', '--resume', dir], { encoding: 'utf8' });
    assert.equal(r.status, 2);
    assert.equal(
      r.stderr,
      `trace-rl: ${dir} is busy: process ${process.pid} is writing this run (${join(dir, LOCK_FILE)}); wait for it to finish or stop it, then resume\n`,
    );
    const reader = RunStore.open(dir, { readonly: true }); // readers (report, export) need no lock
    reader.close();
  } finally {
    holder.close();
  }
  assert.equal(existsSync(join(dir, LOCK_FILE)), false, 'released on close');
  const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout;
  writeFileSync(join(dir, LOCK_FILE), `${dead}\n`);
  const taken = RunStore.open(dir);
  assert.equal(readFileSync(join(dir, LOCK_FILE), 'utf8'), `${process.pid}\n`);
  taken.close();
});

test('atomic writes replace regular files and symlink targets, and refuse FIFOs, devices and folders', () => {
  const dir = fresh();
  const target = join(dir, 'report.html');
  writeFileSync(target, 'old');
  const link = join(dir, 'link.html');
  symlinkSync(target, link);
  writeFileAtomic(link, 'new');
  assert.ok(lstatSync(link).isSymbolicLink(), 'the link stays a link');
  assert.equal(readlinkSync(link), target);
  assert.equal(readFileSync(target, 'utf8'), 'new');
  const dangling = join(dir, 'dangling');
  symlinkSync(join(dir, 'later.txt'), dangling);
  writeFileAtomic(dangling, 'made');
  assert.equal(readFileSync(join(dir, 'later.txt'), 'utf8'), 'made');

  const fifo = join(dir, 'pipe');
  execFileSync('mkfifo', [fifo]);
  assert.throws(
    () => writeFileAtomic(fifo, 'x'),
    (e: Error) =>
      e instanceof AtomicWriteError &&
      e.message === `${fifo}: is a named pipe (FIFO), not a regular file; trace-rl only replaces regular files (or a symlink's target): choose a file path`,
  );
  assert.ok(lstatSync(fifo).isFIFO());
  const toFifo = join(dir, 'to-pipe');
  symlinkSync(fifo, toFifo);
  assert.throws(() => writeFileAtomic(toFifo, 'x'), /is a named pipe/);
  assert.throws(() => writeFileAtomic('/dev/null', 'x'), /\/dev\/null: is a character device, not a regular file/);
  assert.ok(lstatSync('/dev/null').isCharacterDevice());
  mkdirSync(join(dir, 'folder'));
  assert.throws(() => writeFileAtomic(join(dir, 'folder'), 'x'), /is a folder, not a regular file/);
  assert.equal(readFileSync(target, 'utf8'), 'new');
});
