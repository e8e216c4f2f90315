// The documented commands on the embedded world and policy (no server): training, resuming, the report,
// export and diagnose, each as written in one workspace (test/docs/doc-shell.ts), in the order a reader
// runs them; appended to training: one step (two to resume) of 24 trajectories on 8 prompts, 5
// held-out questions (a budget in tokens keeps its budget); to diagnose: 4 prompts, k = 2.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, symlinkSync } from 'node:fs';
import { docTests, DocWorkspace, withFlags, type DocStep } from './doc-shell.ts';

const ws = new DocWorkspace('world');
const SMALL = '--steps 1 --budget 24 --pool 8 --set eval.questions=5';
const DIAGNOSE_SMALL = '--prompts 4 --k 2';
const trains = (flags: string) => async (s: DocStep) => {
  const r = await ws.ok(s.place, withFlags(s.text, flags));
  assert.match(r.stderr + r.stdout, /finished \d+ step\(s\) in /);
};

/**
 * docs/export.md and docs/report.md read a run the reader trained before, runs/trace-s0 (`train --strategy
 * trace`'s folder) with a step 12: 13 small steps of it, made once.
 */
let traceS0: Promise<unknown> | undefined;
const withTraceS0 = () =>
  (traceS0 ??= ws.ok('(the run docs/export.md reads)', 'npx trace-rl train --strategy trace --steps 13 --budget 8 --pool 4 --set eval.questions=3'));

const exports = (file: string) => async (s: DocStep) => {
  await withTraceS0();
  await ws.ok(s.place, s.text);
  assert.ok(existsSync(ws.path(file)), `${s.place}: wrote no ${file}`);
};

docTests('test/docs/run-world.test.ts', [
  ['npx trace-rl train --strategy trace --steps 30 --out runs/t0', trains(SMALL)],
  [
    'npx trace-rl train --resume runs/t0',
    async (s) => {
      const r = await ws.ok(s.place, withFlags(s.text, '--steps 2'));
      assert.match(r.stderr, /resuming at step 1/);
    },
  ],
  [
    'npx trace-rl report runs/t0',
    async (s) => {
      await ws.ok(s.place, s.text);
      assert.match(readFileSync(ws.path('runs/t0/report.html'), 'utf8'), /<svg/);
    },
  ],
  [
    'npx trace-rl export runs/t0 --format verl --out step.parquet',
    async (s) => {
      await ws.ok(s.place, s.text);
      assert.equal(readFileSync(ws.path('step.parquet')).subarray(0, 4).toString(), 'PAR1');
    },
  ],
  ['npx trace-rl train --budget-unit tokens --budget 11500 --out runs/tok', trains('--steps 1 --set eval.questions=5')],
  [
    'npx trace-rl diagnose --env world --policy embedded --warm-start',
    async (s) => assert.match((await ws.ok(s.place, withFlags(s.text, DIAGNOSE_SMALL))).stdout, /depth/i),
  ],
  [
    'trace-rl diagnose --env world --policy embedded --prompts 16 --k 8',
    async (s) => assert.match((await ws.ok(s.place, withFlags(s.text, DIAGNOSE_SMALL))).stdout, /depth/i),
  ],
  [
    'trace-rl diagnose --env world --policy embedded --run runs/my-run',
    async (s) => {
      // "a trained checkpoint": the reader's own run; here README's runs/t0.
      symlinkSync(ws.path('runs/t0'), ws.path('runs/my-run'));
      assert.match((await ws.ok(s.place, withFlags(s.text, DIAGNOSE_SMALL))).stdout, /depth/i);
    },
  ],
  ['npx trace-rl train --env world --steps 10 --out runs/world', trains(SMALL)],
  ['npx trace-rl train --set env.world.profile=late --steps 10 --out runs/late', trains(SMALL)],
  ['trace-rl export runs/trace-s0 --step 12 --format verl --out step-12.parquet', exports('step-12.parquet')],
  ['trace-rl export runs/trace-s0 --format trl --out step-last.parquet --estimator tree-grpo', exports('step-last.parquet')],
  ['trace-rl export runs/trace-s0 --step 12 --format trie --out step-12.trie.jsonl', exports('step-12.trie.jsonl')],
  [
    'tail -f runs/trace-s0/metrics.jsonl',
    async (s) => {
      await withTraceS0();
      // It follows the file until stopped (Ctrl-C): here, until it has shown the last step.
      const tail = ws.start(s.text);
      await ws.waitFor(tail, /"step":12\b/, 10_000);
      await tail.stop();
    },
  ],
]);
