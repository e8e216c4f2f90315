/**
 * Crash safety: SIGKILL `trace-rl train` at seeded random moments, several times, resuming after
 * each; the final run must equal an uninterrupted run with the same seed (trees, metrics, details,
 * checkpoints), with every step stored once and the ledger equal to the stored leaves.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { CREATING_MARKER, RUN_DB } from '../../src/store/index.ts';
import { createRng } from '../../src/util/rng.ts';
import { BIN, killResumeCycles, ledgerViolations, runContents, storedSteps } from './crash-harness.ts';
// Runs that are neither killed nor timed go through the real CLI in this process (a spawned one costs ~1.5 s of CPU to load).
import { runCli } from './cli-in-process.ts';

const config = { steps: 5, pool: 8, strategy: { name: 'trace', budget: 16 }, env: { questions: 200 }, eval: { every: 2, questions: 20 } };

const root = mkdtempSync(join(tmpdir(), 'trace-crash-'));
const configFile = join(root, 'config.json');
writeFileSync(configFile, JSON.stringify(config));
const whole = join(root, 'whole');
let wallMs = 0;

before(async () => {
  // A first run fits and caches the warm start (seconds of CPU the later runs skip), so the timed run
  // below measures what a killed run takes and the kills land inside it. One step is enough: the
  // cached warm start does not depend on the number of steps.
  const warm = await runCli(['train', '--config', configFile, '--out', join(root, 'warm'), '--steps', '1', '--quiet']);
  assert.equal(warm.code, 0, warm.stderr);
  const t0 = Date.now();
  const r = spawnSync(process.execPath, [BIN, 'train', '--config', configFile, '--out', whole, '--quiet'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  wallMs = Date.now() - t0;
});

test('five kill -9 at random moments, each followed by a resume: identical to an uninterrupted run', async () => {
  const cut = join(root, 'cut');
  // Kills spread over the whole length of an uninterrupted run: startup, steps, writes, the end.
  const report = await killResumeCycles({ configFile, dir: cut, kills: 5, rng: createRng(11), minDelayMs: 200, maxDelayMs: wallMs });
  assert.ok(report.kills >= 1, 'at least one kill landed');
  assert.deepEqual(ledgerViolations(cut), []);
  assert.deepEqual(runContents(cut), runContents(whole));
});

test('a run folder whose creation was killed half-way can be started again with the same --out', async () => {
  const dir = join(mkdtempSync(join(tmpdir(), 'trace-crash-')), 'run');
  mkdirSync(dir);
  // What a kill between opening the database and committing its first rows leaves behind: the
  // creating marker (written before the database is opened) and a database without a run in it.
  writeFileSync(join(dir, CREATING_MARKER), '1\n');
  const db = new Database(join(dir, RUN_DB));
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)');
  db.close();
  const resume = await runCli(['train', '--resume', dir, '--quiet']);
  assert.equal(resume.code, 2);
  assert.match(resume.stderr, /never finished being created/);
  assert.match(resume.stderr, /--out/);
  const fresh = await runCli([
    'train',
    '--out',
    dir,
    '--steps',
    '1',
    '--pool',
    '4',
    '--budget',
    '8',
    '--set',
    'env.questions=100',
    '--set',
    'eval.questions=5',
    '--quiet',
  ]);
  assert.equal(fresh.code, 0, fresh.stderr);
  assert.equal(runContents(dir).steps.length, 1);
});

test('Ctrl-C (SIGINT) stops the run between steps (no half step stored), exits 130, and it resumes to the same result', async () => {
  const dir = join(root, 'interrupted');
  const child = spawn(process.execPath, [BIN, 'train', '--config', configFile, '--out', dir, '--quiet'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  child.stdout.on('data', (d) => (stdout += d));
  // Interrupt as soon as the first step is stored (the second is then in progress).
  const poll = setInterval(() => {
    if (storedSteps(dir) >= 1) {
      clearInterval(poll);
      child.kill('SIGINT');
    }
  }, 20);
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  clearInterval(poll);
  assert.equal(code, 130, 'a clean stop by Ctrl-C exits 130, the shell convention');
  assert.match(stdout, /stopped after \d+ new step\(s\); resume with: trace-rl train --resume/);
  const partial = runContents(dir);
  assert.equal(partial.status, 'running');
  assert.ok(partial.steps.length >= 1 && partial.steps.length < config.steps, `stopped part-way (${partial.steps.length} steps)`);
  assert.deepEqual(ledgerViolations(dir), [], 'no half step was stored');
  const r = await runCli(['train', '--resume', dir, '--quiet']);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(runContents(dir), runContents(whole));
});
