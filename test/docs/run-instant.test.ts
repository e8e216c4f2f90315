// The documented commands that answer at once (solvers, scorers, the resolved configuration, the
// simulator's scripted policy), run as written in a workspace (test/docs/doc-shell.ts); where the doc
// shows the output in a comment, the output is that.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { docTests, DocWorkspace, type DocStep } from './doc-shell.ts';
import { docCommands, ROOT } from './shell-commands.ts';

const ws = new DocWorkspace('instant');

/** The output the doc shows in the command's comment (JSON), compared as values. */
function shownOutput(step: DocStep): unknown {
  const c = docCommands().find((d) => d.text === step.text && /^\{/.test(d.comment));
  assert.ok(c, `${step.place}: no output shown in a comment`);
  return JSON.parse(c.comment);
}

const asShown = async (step: DocStep) => {
  const r = await ws.ok(step.place, step.text);
  assert.deepEqual(JSON.parse(r.stdout), shownOutput(step), `${step.place}: the output differs from the doc's`);
};

/** environments.md shows the scorer's output on the line below (docs/environments.md:19 shows it beside the same input). */
const SCORE_OUTPUT = { em: 1, f1: 1, precision: 1, recall: 1 };

test('in a checkout, `npx trace-rl` is the project’s own bin (what the workspace’s npx stands for)', () => {
  const version = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version;
  assert.equal(execFileSync('npx', ['--no-install', 'trace-rl', '--version'], { cwd: ROOT, encoding: 'utf8' }).trim(), version);
});

docTests('test/docs/run-instant.test.ts', [
  [
    'npx trace-rl config --strategy grpo --budget 96',
    async (s) => {
      const r = await ws.ok(s.place, s.text);
      assert.match(r.stdout, /^strategy:\n {2}name: grpo\n(?: .*\n)* {2}budget: 96$/m);
    },
  ],
  [
    `echo '{"v":[0.1,0.5,0.9],"budget":8,"min":2,"max":64}' | npx trace-rl solve roots`,
    async (s) => {
      const { m } = JSON.parse((await ws.ok(s.place, s.text)).stdout) as { m: number[] };
      assert.equal(
        m.reduce((a, b) => a + b, 0),
        8,
      );
    },
  ],
  [`echo '{"v":[0.5,0.1,0.9,0.3],"budget":9,"min":2,"max":4}' | npx trace-rl solve roots`, asShown],
  [`echo '{"budget":4,"prefixes":[{"id":"a","q":0.3,"r":1},{"id":"b","q":0.9,"r":1}]}' | npx trace-rl solve prefixes`, asShown],
  [`echo '{"p":[0.5,0.1,0.9,0.3],"budget":9}' | npx trace-rl solve knapsack`, asShown],
  [
    'npx trace-rl demo-allocate --trials 50',
    async (s) => {
      const r = await ws.ok(s.place, s.text);
      for (const arm of ['grpo', 'trace', 'oracle']) assert.match(r.stdout, new RegExp(`^${arm} +\\d`, 'm'));
    },
  ],
  [
    'trace-rl diagnose --env simulator --policy scripted --json',
    async (s) => {
      const out = JSON.parse((await ws.ok(s.place, s.text)).stdout) as Record<string, unknown>;
      assert.ok(Object.keys(out).length > 0);
    },
  ],
  [`echo '{"prediction":"The Paris","gold":["paris","Paris, France"]}' | npx trace-rl score`, asShown],
  [
    `echo '{"prediction":"The Paris","gold":["paris","Paris, France"]}' | trace-rl score`,
    async (s) => assert.deepEqual(JSON.parse((await ws.ok(s.place, s.text)).stdout), SCORE_OUTPUT),
  ],
  [`printf '%s\\n' '{"gold":"\\\\frac12","answer":"so \\\\boxed{0.5}"}' | npx trace-rl grade math`, asShown],
  [`printf '%s\\n' '{"gold":"\\\\frac12","answer":"so \\\\boxed{0.5}"}' | trace-rl grade math`, asShown],
  [
    'trace-rl score --success --rule f1 --threshold 0.5 < preds.jsonl',
    async (s) => {
      // The block reads a file of the reader's predictions: one a line, as `score` reads its stdin.
      writeFileSync(ws.path('preds.jsonl'), '{"prediction":"The Paris","gold":["paris"]}\n{"prediction":"Lyon","gold":["paris"]}\n');
      const lines = (await ws.ok(s.place, s.text)).stdout.trim().split('\n');
      assert.deepEqual(
        lines.map((l) => (JSON.parse(l) as { success: number }).success),
        [1, 0],
      );
    },
  ],
  [
    'npx trace-rl eval --policy scripted --env simulator --questions 500 --json',
    async (s) => {
      const out = JSON.parse((await ws.ok(s.place, s.text)).stdout) as { datasets: Record<string, { n: number }> };
      assert.ok(
        Object.values(out.datasets).some((d) => d.n === 500),
        JSON.stringify(out).slice(0, 300),
      );
    },
  ],
]);
