/**
 * The Python external trainer (examples/external-trainer) against the real loop, as README.md and
 * docs/export.md run it (their commands, test/docs/shell-commands.yaml): trace-rl serve (llama.cpp) ↔
 * trace-rl rollout (token mode) ↔ trainer.py (Debian's PyTorch), for 2 steps on verl's rows (the docs
 * say 3; two already show the reload after every update and the check of the final weights) and 1 on
 * TRL's. Skips only when python3-torch is not installed (CI installs it: .ci/run).
 */
import assert from 'node:assert/strict';
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { docTests, type DocStep } from '../docs/doc-shell.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
// run.sh uses Debian's python (where apt puts python3-torch) unless PYTHON names another.
const PYTHON = process.env.PYTHON ?? '/usr/bin/python3';
const hasTorch = spawnSync(PYTHON, ['-c', 'import torch, numpy'], { stdio: 'ignore' }).status === 0;

/**
 * Runs the documented command as written from the checkout's root (where the docs run it), keeping its
 * work folder (`--keep`, appended), after more flags (`--steps 1`: run.sh takes an option's last value).
 */
function runExample(s: DocStep, t: TestContext, flags = ''): { work: string; r?: SpawnSyncReturns<string> } {
  const work = mkdtempSync(join(tmpdir(), 'trace-external-'));
  if (!hasTorch) {
    t.skip('python3-torch is not installed (apt-get install python3-torch python3-numpy; .ci/run does)');
    return { work };
  }
  const r = spawnSync('bash', ['-c', `${s.text} ${flags} --keep ${work}`], { cwd: ROOT, encoding: 'utf8', timeout: 880_000 });
  assert.equal(r.status, 0, `${s.place}: run.sh failed:\n${r.stderr}\n${r.stdout}`);
  return { work, r };
}

const summaryOf = (r: SpawnSyncReturns<string>) =>
  JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { steps: number; rows: number; max_logprob_gap: number; weights_reloaded: number };

docTests(
  'test/export/external-trainer.test.ts',
  [
    [
      // external trainer: clipped policy-gradient steps (2 of the documented 3), PyTorch log-probabilities equal llama.cpp's, weights reloaded each step
      'bash examples/external-trainer/run.sh --steps 3',
      async (s, t) => {
        const { work, r } = runExample(s, t, '--steps 2');
        if (!r) return;
        const summary = summaryOf(r);
        assert.equal(summary.steps, 2);
        assert.equal(summary.weights_reloaded, 2, 'the rollout service had trace-rl serve reload after every update');
        assert.ok(summary.rows > 0);
        assert.ok(summary.max_logprob_gap < 1e-3, `PyTorch and llama.cpp agree on every sampled token (gap ${summary.max_logprob_gap})`);
        const steps = r.stderr
          .split('\n')
          .filter((l) => l.startsWith('{"step"'))
          .map((l) => JSON.parse(l) as Record<string, number>);
        assert.deepEqual(
          steps.map((s) => s.step),
          [0, 1, 2],
          'two updates, then the check of the final weights',
        );
        for (const s of steps.slice(0, 2)) {
          assert.ok(s.trained_tokens! > 0, `step ${s.step}: trained on sampled tokens`);
          assert.ok(
            Math.abs(s.loss! - s.loss_at_ratio_1!) < 1e-5,
            `step ${s.step}: at ratio 1 the clipped loss is minus the mean advantage (${s.loss} vs ${s.loss_at_ratio_1})`,
          );
          if (s.mean_abs_advantage! > 1e-6)
            assert.ok(s.loss_after! < s.loss!, `step ${s.step}: the update lowered the loss on its batch (${s.loss} → ${s.loss_after})`);
        }
        assert.ok(
          steps.slice(0, 2).some((s) => s.mean_abs_advantage! > 1e-6),
          'at least one batch had a contrast, so a real gradient step was taken and checked',
        );
        // The last batch was sampled by the trainer's final weights, and PyTorch still agrees with the server.
        assert.ok(steps[2]!.logprob_gap! < 1e-3);
        const rollout = readFileSync(join(work, 'rollout.jsonl'), 'utf8');
        assert.equal((rollout.match(/"event":"weights"/g) ?? []).length, 2);
      },
    ],
    [
      // The same loop on TRL's rows (prompt_ids / completion_ids): one step shows the trainer reads them and still agrees with llama.cpp.
      'bash examples/external-trainer/run.sh --steps 3 --format trl-jsonl',
      async (s, t) => {
        const { work, r } = runExample(s, t, '--steps 1');
        if (!r) return;
        const summary = summaryOf(r);
        assert.equal(summary.steps, 1);
        assert.equal(summary.weights_reloaded, 1);
        assert.ok(summary.rows > 0);
        assert.ok(summary.max_logprob_gap < 1e-3, `PyTorch and llama.cpp agree (gap ${summary.max_logprob_gap})`);
        const batch = readFileSync(join(work, 'rollout.jsonl'), 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { event: string; file?: string })
          .find((e) => e.event === 'batch')!;
        const row = JSON.parse(readFileSync(batch.file!, 'utf8').split('\n')[0]!) as Record<string, unknown>;
        assert.ok(Array.isArray(row.completion_ids) && Array.isArray(row.prompt_ids), `TRL rows: ${Object.keys(row)}`);
      },
    ],
  ],
  { timeout: 900_000 },
);
