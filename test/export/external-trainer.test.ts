/**
 * The Python external trainer (examples/external-trainer) for 3 steps against the real loop:
 * trace-rl serve (llama.cpp) ↔ trace-rl rollout (token mode) ↔ trainer.py (Debian's PyTorch).
 * Skips only when python3-torch is not installed (CI installs it: .ci/run).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const RUN = fileURLToPath(new URL('../../examples/external-trainer/run.sh', import.meta.url));
// run.sh uses Debian's python (where apt puts python3-torch) unless PYTHON names another.
const PYTHON = process.env.PYTHON ?? '/usr/bin/python3';
const hasTorch = spawnSync(PYTHON, ['-c', 'import torch, numpy'], { stdio: 'ignore' }).status === 0;

test(
  'external trainer: 3 clipped policy-gradient steps, PyTorch log-probabilities equal llama.cpp’s, weights reloaded each step',
  { skip: hasTorch ? false : 'python3-torch is not installed (apt-get install python3-torch python3-numpy; .ci/run does)', timeout: 900_000 },
  () => {
    const work = mkdtempSync(join(tmpdir(), 'trace-external-'));
    const r = spawnSync('bash', [RUN, '--steps', '3', '--keep', work], { encoding: 'utf8', timeout: 880_000 });
    assert.equal(r.status, 0, `run.sh failed:\n${r.stderr}\n${r.stdout}`);
    const lines = r.stdout.trim().split('\n');
    const summary = JSON.parse(lines.at(-1)!) as { steps: number; rows: number; max_logprob_gap: number; weights_reloaded: number };
    assert.equal(summary.steps, 3);
    assert.equal(summary.weights_reloaded, 3, 'the rollout service had trace-rl serve reload after every update');
    assert.ok(summary.rows > 0);
    assert.ok(summary.max_logprob_gap < 1e-3, `PyTorch and llama.cpp agree on every sampled token (gap ${summary.max_logprob_gap})`);
    const steps = r.stderr
      .split('\n')
      .filter((l) => l.startsWith('{"step"'))
      .map((l) => JSON.parse(l) as Record<string, number>);
    assert.deepEqual(
      steps.map((s) => s.step),
      [0, 1, 2, 3],
      'three updates, then the check of the final weights',
    );
    for (const s of steps.slice(0, 3)) {
      assert.ok(s.trained_tokens! > 0, `step ${s.step}: trained on sampled tokens`);
      assert.ok(
        Math.abs(s.loss! - s.loss_at_ratio_1!) < 1e-5,
        `step ${s.step}: at ratio 1 the clipped loss is minus the mean advantage (${s.loss} vs ${s.loss_at_ratio_1})`,
      );
      if (s.mean_abs_advantage! > 1e-6)
        assert.ok(s.loss_after! < s.loss!, `step ${s.step}: the update lowered the loss on its batch (${s.loss} → ${s.loss_after})`);
    }
    assert.ok(
      steps.slice(0, 3).some((s) => s.mean_abs_advantage! > 1e-6),
      'at least one batch had a contrast, so a real gradient step was taken and checked',
    );
    // The last batch was sampled by the trainer's final weights, and PyTorch still agrees with the server.
    assert.ok(steps[3]!.logprob_gap! < 1e-3);
    const rollout = readFileSync(join(work, 'rollout.jsonl'), 'utf8');
    assert.equal((rollout.match(/"event":"weights"/g) ?? []).length, 3);
  },
);
