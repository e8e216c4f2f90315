// The documented commands on real multi-hop QA with the embedded policy (the bundled dataset samples,
// BM25 over each question's paragraphs, CPU only), as written in one workspace (test/docs/doc-shell.ts);
// appended: one training step, 5 questions per evaluated dataset.
import assert from 'node:assert/strict';
import { existsSync, symlinkSync } from 'node:fs';
import { docTests, DocWorkspace, withFlags, type DocStep } from './doc-shell.ts';

const ws = new DocWorkspace('qa');

/** Evaluates and checks the table: every named dataset with its 5 questions, and the page in the folder the command names (or eval's default). */
const evaluates = (out: string) => async (s: DocStep) => {
  const r = await ws.ok(s.place, withFlags(s.text, '--questions 5'));
  for (const name of /--datasets (\S+)/
    .exec(s.text)![1]!
    .split(',')
    .map((d) => d.split(':')[0]!))
    assert.match(r.stdout, new RegExp(`^${name} +5 +0 `, 'm'), `${s.place}: no row of 5 questions without errors for ${name}`);
  assert.ok(existsSync(ws.path(out, 'index.html')), `${s.place}: no page in ${out}`);
};

docTests('test/docs/run-qa.test.ts', [
  [
    'npx trace-rl train --env qa --datasets hotpotqa --steps 15 --out runs/qa',
    async (s) => assert.match((await ws.ok(s.place, withFlags(s.text, '--steps 1'))).stdout, /finished 1 step/),
  ],
  ['npx trace-rl eval --policy embedded --run runs/qa --datasets hotpotqa,2wiki:eval,musique:eval,bamboogle:eval', evaluates('runs/eval-embedded-qa')],
  ['npx trace-rl eval --policy embedded --run runs/qa --datasets hotpotqa,2wiki:eval --out runs/eval-qa', evaluates('runs/eval-qa')],
  [
    'npx trace-rl eval --policy embedded --run runs/trace-s0 --datasets hotpotqa,2wiki:eval,musique:eval,bamboogle:eval --out runs/eval-trace-s0',
    async (s) => {
      // "the embedded policy of a training run": the reader's own QA run; here the one trained above.
      symlinkSync(ws.path('runs/qa'), ws.path('runs/trace-s0'));
      await evaluates('runs/eval-trace-s0')(s);
    },
  ],
]);
