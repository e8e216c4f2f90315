// The documented tiny-LM commands (llama.cpp samples, jax-js trains, in process), as written in one
// workspace (test/docs/doc-shell.ts); appended: one training step of 4 trajectories on 2 prompts with
// 3 held-out questions (a trajectory's update is most of a step's cost), 3 questions per evaluation.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { docTests, DocWorkspace, withFlags, type DocStep } from './doc-shell.ts';
import { ROOT } from './shell-commands.ts';

const ws = new DocWorkspace('tinylm');
const TRAIN_SMALL = '--steps 1 --budget 4 --pool 2 --set eval.questions=3';

const trains = (out: string) => async (s: DocStep) => {
  const r = await ws.ok(s.place, withFlags(s.text, TRAIN_SMALL), 240_000);
  assert.match(r.stdout, new RegExp(`finished 1 step\\(s\\) in ${out}`));
};

/** Evaluates 3 questions and checks the table's world row: 3 questions, no errors. */
const evaluates = async (s: DocStep) => {
  const r = await ws.ok(s.place, withFlags(s.text, '--questions 3'));
  assert.match(r.stdout, /^world +3 +0 /m, r.stdout);
};

const shallow = execFileSync('git', ['rev-parse', '--is-shallow-repository'], { cwd: ROOT, encoding: 'utf8' }).trim() === 'true';

docTests('test/docs/run-tinylm.test.ts', [
  ['npx trace-rl train --policy tiny-lm --model bench/tinylm/warm-start.gguf --budget 32 --pool 32 --steps 12 --out runs/lm', trains('runs/lm')],
  ['npx trace-rl eval --policy tiny-lm --run runs/lm --questions 300 --samples 4 --temperature 1 --out runs/eval-lm', evaluates],
  ['npx trace-rl eval --policy tiny-lm --model bench/tinylm/warm-start-d64x4d.gguf --env world --questions 300 --out runs/eval-d64x4d', evaluates],
  [
    'npx trace-rl eval --policy tiny-lm --model bench/tinylm/warm-start-d64x4.gguf --env world --questions 300 --out runs/eval-d64x4',
    async (s, t) => {
      // The block's comment says how to get this untracked checkpoint back: restore.sh, from the commit that added it.
      if (shallow) return t.skip('a shallow clone lacks the commit bench/tinylm/restore.sh restores warm-start-d64x4.gguf from');
      execFileSync('bash', [`${ROOT}/bench/tinylm/restore.sh`, 'warm-start-d64x4', ws.path('bench/tinylm')], { cwd: ROOT, stdio: 'pipe' });
      assert.ok(existsSync(ws.path('bench/tinylm/warm-start-d64x4.gguf')));
      await evaluates(s);
    },
  ],
  ['npx trace-rl eval --policy tiny-lm --model bench/tinylm/warm-start.gguf --env world --questions 200', evaluates],
  [
    'npx trace-rl train --set policy.kind=tiny-lm --set policy.model=bench/tinylm/warm-start.gguf --set policy.learningRate=0.0003 --set policy.epochs=1 --budget 32 --pool 32 --steps 12 --set eval.every=12 --set eval.questions=60 --out runs/lm-rl',
    trains('runs/lm-rl'),
  ],
  ['npx trace-rl eval --policy tiny-lm --run runs/lm-rl --questions 300 --samples 4 --temperature 1 --out runs/eval-lm-rl', evaluates],
]);
