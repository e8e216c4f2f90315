/** `trace-rl report` end to end through bin/trace-rl.js, on synthetic run folders (test/report/synthetic-runs.ts: no training needed). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeSyntheticRun } from './synthetic-runs.ts';

function cli(args: string[]) {
  return spawnSync(process.execPath, ['bin/trace-rl.js', ...args], { encoding: 'utf8', timeout: 60_000 });
}

test('report writes RUN_DIR/report.html by default and prints where it is and the headline', () => {
  const root = mkdtempSync(join(tmpdir(), 'trace-report-cli-'));
  const a = writeSyntheticRun({ dir: join(root, 'a'), strategy: 'trace', seed: 1, steps: 3, prompts: 3 }).dir;
  const b = writeSyntheticRun({ dir: join(root, 'b'), strategy: 'grpo', seed: 1, steps: 3, prompts: 3 }).dir;
  const r = cli(['report', a, b]);
  assert.equal(r.status, 0, r.stderr);
  const out = join(a, 'report.html');
  assert.ok(existsSync(out));
  const lines = r.stdout.trim().split('\n');
  assert.match(lines[0], new RegExp(`^report: ${out.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(\\d+ KB, 2 runs\\)$`));
  assert.match(r.stdout, /^target accuracy [\d.]+: .* \((trace|grpo)\)$/m);
  assert.match(r.stdout, /^strategy\s+runs\s+final_acc\s+eff_ratio\s+trajectories\s+turns\s+tokens\s+traj_to_target\s+tokens_to_target$/m);
  assert.match(r.stdout, /^grpo\s+1\s+[\d.]+\s+[\d.]+\s+\d+/m);
  assert.match(r.stdout, /^trace\s+1\s+[\d.]+\s+[\d.]+\s+\d+/m);

  const custom = join(root, 'elsewhere', 'r.html');
  const r2 = cli(['report', a, '--out', custom]);
  assert.equal(r2.status, 0, r2.stderr);
  assert.ok(existsSync(custom));
});

test('a folder that is not a run: one line on stderr, exit 2, nothing on stdout', () => {
  const empty = mkdtempSync(join(tmpdir(), 'trace-report-cli-none-'));
  const r = cli(['report', empty]);
  assert.equal(r.status, 2);
  assert.equal(r.stdout, '');
  assert.equal(r.stderr.trim().split('\n').length, 1);
  assert.match(r.stderr, /^trace-rl: .*not a trace-rl run folder/);
  assert.ok(!existsSync(join(empty, 'report.html')));
});
