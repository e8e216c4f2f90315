/**
 * "Say no clearly" (issue 19): each refusal is the exact one stderr line, exit code 2, nothing on
 * stdout, and nothing left behind. Runs go through the real CLI code path in this process (fast);
 * the file-system cases use real folders, a real FIFO and, where this machine allows mounting, real
 * read-only and full tmpfs file systems.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { RUN_DB, RunStore } from '../../src/store/index.ts';
import { runCli } from './cli-in-process.ts';

const SIM = ['--env', 'simulator', '--pool', '8', '--budget', '24', '--quiet'];
const root = mkdtempSync(join(tmpdir(), 'trace-sayno-'));
const run = join(root, 'run');

before(async () => {
  const r = await runCli(['train', ...SIM, '--steps', '2', '--out', run]);
  assert.equal(r.code, 0, r.stderr);
});

/** Asserts the exact single stderr line (a RegExp for the parts that vary), exit 2, empty stdout. */
function saysNo(r: { code: number; stdout: string; stderr: string }, line: string | RegExp): void {
  assert.equal(r.code, 2, r.stderr);
  assert.equal(r.stdout, '', 'nothing on stdout');
  assert.equal(r.stderr.split('\n').length, 2, `one line: ${r.stderr}`);
  if (typeof line === 'string') assert.equal(r.stderr, `${line}\n`);
  else assert.match(r.stderr, line);
}

test('train --out <existing run> refuses before printing the configuration', async () => {
  saysNo(
    await runCli(['train', ...SIM, '--out', run]),
    `trace-rl: ${join(run, RUN_DB)} already exists: resume it with --resume ${run}, or choose another --out`,
  );
});

test('train --resume with flags that conflict with the stored configuration is refused, naming both values', async () => {
  saysNo(
    await runCli(['train', '--resume', run, '--strategy', 'bogus', '--steps', '3', '--budget', '999']),
    `trace-rl: --resume ${run}: strategy.name "bogus" conflicts with the run's stored "defensive"; a resumed run keeps its configuration (only --steps, and --base-url for an engine that moved, may change): drop the flag, or start a new run with --out`,
  );
  saysNo(await runCli(['train', '--resume', run, '--budget', '999']), /strategy\.budget 999 conflicts with the run's stored 24/);
});

test('train --resume --steps N applies the new total, says so, and progress counts to N (never "7/0")', async () => {
  const copy = join(root, 'more');
  const made = await runCli(['train', ...SIM, '--steps', '1', '--out', copy]);
  assert.equal(made.code, 0);
  const r = await runCli(['train', '--resume', copy, '--steps', '3', '--budget', '24']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, new RegExp(`${copy}: steps 1 → 3 \\(--steps; stored in the run\\)`));
  assert.match(r.stdout, /finished 2 step\(s\)/);
  const s = RunStore.open(copy, { readonly: true });
  assert.equal((s.config() as { steps: number }).steps, 3);
  assert.equal(s.lastStep(), 2);
  s.close();
  const progress = await runCli(['train', '--resume', copy, '--steps', '4']);
  assert.match(progress.stderr, /step 4\/4/);
  assert.doesNotMatch(progress.stderr, /\/0\b/);
});

test('train --resume on a folder made by rollout is refused', async () => {
  const dir = join(root, 'rollout-run');
  RunStore.create(dir, { steps: 2 }, { kind: 'rollout' }).close();
  saysNo(
    await runCli(['train', '--resume', dir]),
    `trace-rl: ${dir} was made by trace-rl rollout (batches for an external trainer), not by train; train cannot resume it: continue it with trace-rl rollout --resume ${dir}, or start a train run with another --out`,
  );
});

test('budgets a strategy cannot spend are errors: below m_min, and more roots than pool × max (unequal budgets in compare)', async () => {
  // The default strategy (defensive, G = ⌊B / pool⌋ ≥ 2), trace's recommended preset (N = ½, uniform
  // roots) and the paper's (N = 2, the root solver's m_min).
  saysNo(
    await runCli(['train', '--budget', '1', '--out', join(root, 'b1')]),
    /^trace-rl: config\.strategy\.budget: budget 1 gives defensive 1 roots, below one group of 2: nothing would be rolled out; raise the budget to at least 2\n$/,
  );
  saysNo(
    await runCli(['train', '--strategy', 'trace', '--budget', '1', '--out', join(root, 'b1')]),
    /^trace-rl: config\.strategy\.budget: budget 1 gives trace M = ⌊B \/ \(1 \+ N\)⌋ = ⌊1 \/ 1\.5⌋ = 0 roots, below one group of 2: nothing would be rolled out; raise the budget to at least 3\n$/,
  );
  saysNo(
    await runCli(['train', '--strategy', 'trace', '--budget', '1', '--set', 'strategy.preset=paper', '--out', join(root, 'b1')]),
    /^trace-rl: config\.strategy\.budget: budget 1 gives trace M = ⌊B \/ \(1 \+ N\)⌋ = ⌊1 \/ 3⌋ = 0 roots, below m_min = 2: nothing would be rolled out; raise the budget to at least 6\n$/,
  );
  saysNo(await runCli(['train', '--strategy', 'grpo', '--budget', '1', '--out', join(root, 'b1')]), /grpo 1 roots, below one group of 2/);
  // The paper's trace: its root solver caps a prompt at m_max (the recommended trace's uniform roots have no cap).
  const cmp = await runCli([
    'compare',
    '--strategies',
    'trace,grpo',
    '--trace',
    'paper',
    '--pool',
    '1',
    '--budget',
    '192',
    '--seeds',
    '1',
    '--out',
    join(root, 'cmp'),
  ]);
  saysNo(
    cmp,
    /^trace-rl: config\.strategy\.budget: budget 192 gives trace M = .* = 64 roots, more than pool 1 × max 16 = 16 can take: it would spend about 48 instead of 192 per step \(unequal budgets\)/,
  );
  assert.equal(existsSync(join(root, 'cmp')), false);
  assert.equal(existsSync(join(root, 'b1')), false);
});

test('integer and number flags take decimal digits only', async () => {
  saysNo(await runCli(['train', '--steps', '0x10', '--out', join(root, 'hex')]), 'trace-rl: --steps "0x10": expected a whole number in decimal digits');
  for (const t of ['', ' ', '0x0', 'Infinity'])
    saysNo(await runCli(['score', '--threshold', t], '{"prediction":"a","gold":"a"}\n'), `trace-rl: --threshold "${t}": expected a decimal number in [0, 1]`);
  assert.equal((await runCli(['score', '--threshold', '0.5'], '{"prediction":"a","gold":"a"}\n')).code, 0);
  saysNo(
    await runCli(['export', run, '--format', 'verl', '--out', join(root, 'x.parquet'), '--step', '1e0']),
    'trace-rl: --step "1e0": expected a whole number in decimal digits ≥ 0',
  );
});

test('advantages rejects an unknown node key (the typo "lenght")', async () => {
  const forest = {
    nodes: [
      { id: 'q', parent: null },
      { id: 'a', parent: 'q', reward: 1, lenght: 3 },
      { id: 'b', parent: 'q', reward: 0 },
    ],
  };
  saysNo(
    await runCli(['advantages', '--estimator', 'grpo'], JSON.stringify(forest)),
    'trace-rl: nodes[1] (id "a").lenght: unknown key; a node has "id", "parent", "reward", "length"',
  );
});

test('argument-parser errors: one line with a pointer to --help, exit 2', async () => {
  saysNo(await runCli(['train', '--bogus']), "trace-rl train: unknown option '--bogus' (see trace-rl train --help)");
  saysNo(await runCli(['serve']), "trace-rl serve: required option '--model <file>' not specified (see trace-rl serve --help)");
  saysNo(
    await runCli(['retriever', 'serve', '--port']),
    "trace-rl retriever serve: option '--port <n>' argument missing (see trace-rl retriever serve --help)",
  );
});

test('a bad --model for train: one line, no configuration printed, no run folder', async () => {
  const out = join(root, 'lm');
  writeFileSync(join(root, 'notes.txt'), 'not a model');
  for (const [model, why] of [
    ['/nonexistent/m.gguf', 'no such file; give a .gguf model file (e.g. bench/tinylm/warm-start.gguf)'],
    [root, 'is a folder; give a .gguf model file'],
    [join(root, 'notes.txt'), 'is not a GGUF file (it does not start with "GGUF"); give a .gguf model file'],
  ]) {
    saysNo(await runCli(['train', '--policy', 'tiny-lm', '--model', model!, '--out', out]), `trace-rl: --model ${model}: ${why}`);
    assert.equal(existsSync(out), false);
  }
});

test('--out through a file, under /proc: one line, at once, nothing made', async () => {
  writeFileSync(join(root, 'file.txt'), 'x');
  saysNo(
    await runCli(['train', ...SIM, '--out', join(root, 'file.txt', 'run')]),
    `trace-rl: ${join(root, 'file.txt', 'run')}: a part of the path is a file, not a folder; choose a path inside a folder`,
  );
  const t = performance.now();
  saysNo(
    await runCli(['train', ...SIM, '--out', '/proc/x']),
    'trace-rl: /proc/x: cannot write in /proc (the file system does not allow creating files here); choose a writable location',
  );
  assert.ok(performance.now() - t < 5000);
  const r = performance.now();
  saysNo(
    await runCli(['report', run, '--out', '/proc/x/report.html']),
    'trace-rl: /proc/x: cannot write in /proc (the file system does not allow creating files here); choose a writable location',
  );
  saysNo(await runCli(['export', run, '--format', 'verl', '--out', '/proc/x/b.parquet']), 'trace-rl: /proc/x/b.parquet: no such file or folder');
  // The report renders its charts before it writes (seconds on a loaded machine); the bug was an endless mkdir.
  assert.ok(performance.now() - r < 60_000, 'report under /proc does not spin');
});

test('rollout --base-url notaurl: one line, nothing left behind', async () => {
  const out = join(root, 'ro');
  saysNo(
    await runCli(['rollout', '--policy', 'openai', '--base-url', 'notaurl', '--out', out, '--steps', '1']),
    'trace-rl: --base-url notaurl: not an http(s) URL; use e.g. http://localhost:8000/v1',
  );
  assert.equal(existsSync(out), false);
});

test('report and export refuse to replace a FIFO with a file', async () => {
  const fifo = join(root, 'fifo');
  execFileSync('mkfifo', [fifo]);
  saysNo(await runCli(['report', run, '--out', fifo]), new RegExp(`^trace-rl: (cannot write .*: )?${fifo}: is a named pipe \\(FIFO\\), not a regular file`));
  saysNo(
    await runCli(['export', run, '--format', 'verl', '--out', fifo]),
    `trace-rl: ${fifo}: is a named pipe (FIFO), not a regular file; trace-rl only replaces regular files (or a symlink's target): choose a file path`,
  );
  assert.ok(lstatSync(fifo).isFIFO());
});

/** Mounts a tmpfs (needs root and CAP_SYS_ADMIN); undefined where this machine does not allow it. */
function tmpfs(options: string): string | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'trace-fs-'));
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', dir]);
  return r.status === 0 ? dir : undefined;
}
const mounted: string[] = [];
after(() => {
  for (const d of mounted) spawnSync('umount', [d]);
});

test('a read-only file system: one line naming it, nothing made', async (t) => {
  const ro = tmpfs('ro,size=1m');
  if (!ro) return t.skip('cannot mount a tmpfs here (needs root with CAP_SYS_ADMIN)');
  mounted.push(ro);
  saysNo(
    await runCli(['train', ...SIM, '--out', join(ro, 'run')]),
    `trace-rl: ${join(ro, 'run')}: cannot write in ${ro} (read-only file system); choose a writable location`,
  );
});

test('a full disk: one line (not a stack trace), exit 2; the run is kept and resumes once there is space', async (t) => {
  const full = tmpfs('size=3m');
  if (!full) return t.skip('cannot mount a tmpfs here (needs root with CAP_SYS_ADMIN)');
  mounted.push(full);
  const out = join(full, 'run');
  const r = await runCli(['train', ...SIM, '--steps', '40', '--out', out]);
  assert.equal(r.code, 2, r.stderr);
  assert.equal(
    r.stderr,
    `trace-rl: ${out}/run.sqlite: the disk is full while writing the run; free some space, then continue with --resume ${out} (the last completed step is kept)\n`,
  );
  spawnSync('mount', ['-o', 'remount,size=64m', full]);
  const stored = RunStore.open(out, { readonly: true });
  const last = stored.lastStep();
  stored.close();
  assert.ok(last >= 0, 'some steps were stored before the disk filled');
  // Two more steps show the run continues (--steps lowers the total so the test stays short).
  const resumed = await runCli(['train', '--resume', out, '--quiet', '--steps', String(last + 3)]);
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.match(resumed.stdout, /finished \d+ step\(s\)/);
});

test('a disk too full for the first step: one line, and the failed start leaves nothing', async (t) => {
  const full = tmpfs('size=256k');
  if (!full) return t.skip('cannot mount a tmpfs here (needs root with CAP_SYS_ADMIN)');
  mounted.push(full);
  const out = join(full, 'run');
  const r = await runCli(['train', ...SIM, '--steps', '3', '--out', out]);
  assert.equal(r.code, 2, r.stderr);
  assert.match(
    r.stderr.trim().split('\n').at(-1)!,
    new RegExp(`^trace-rl: ${out}/run\\.sqlite: the disk is full while creating the run; free some space and start again$`),
  );
  assert.deepEqual(readdirSync(full), [], 'nothing left behind');
});
