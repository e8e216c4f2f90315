/**
 * Rerunning an evaluation retries the questions that failed, and used to append their new lines
 * after the failed ones, so trajectories.jsonl held some questions twice. The folder now ends a run
 * with one line per question (the last), and a rerun killed before closing is compacted on reopen.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { EvalError, EvalStore, TRAJECTORIES_FILE } from '../../src/eval/eval-store.ts';
import { runCli } from '../helpers/run-cli.ts';
import { startStandIn } from '../policy/openai-stand-in.ts';

interface Line {
  dataset: string;
  id: string;
  errors: number;
}
const lines = (dir: string) =>
  readFileSync(path.join(dir, TRAJECTORIES_FILE), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Line);

test('a rerun that retries failed questions leaves one line per question', async () => {
  let down = true;
  // A real server that answers 500 for one question while "down", then recovers.
  const server = await startStandIn({ fault: (_n, body) => (down && JSON.stringify(body).includes('Hamlet') ? 'error500' : 'ok') });
  try {
    const dir = mkdtempSync(path.join(tmpdir(), 'trace-eval-rerun-'));
    const data = path.join(dir, 'two.jsonl');
    writeFileSync(
      data,
      [
        { id: 'a', question: 'When was Alan Turing born?', answer: '1912' },
        { id: 'b', question: 'Who wrote Hamlet?', answer: 'Shakespeare' },
      ]
        .map((x) => JSON.stringify(x))
        .join('\n') + '\n',
    );
    const out = path.join(dir, 'eval');
    const args = [
      'eval',
      '--env',
      'qa',
      '--datasets',
      data,
      '--split',
      'all',
      '--policy',
      'openai',
      '--base-url',
      server.url,
      '--retries',
      '1',
      '--out',
      out,
      '--quiet',
    ];
    const first = await runCli(args);
    assert.ok(first.code === 0 || first.code === 1, first.stderr);
    assert.deepEqual(
      lines(out)
        .map((l) => [l.id, l.errors > 0])
        .sort(),
      [
        ['a', false],
        ['b', true],
      ],
      'the first run: b failed',
    );
    down = false;
    const second = await runCli(args);
    assert.equal(second.code, 0, second.stderr);
    const after = lines(out);
    assert.deepEqual(after.map((l) => l.id).sort(), ['a', 'b'], `one line per question: ${after.map((l) => l.id).join(', ')}`);
    assert.ok(after.every((l) => l.errors === 0));
  } finally {
    await server.close();
  }
});

test('a rerun killed before it closed (duplicate lines on disk) is compacted when the folder is reopened', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'trace-eval-dup-'));
  const record = (id: string, errors: number) => ({ dataset: 'd', id, question: id, answers: [], samples: [], metrics: {}, errors, tree: {} });
  const store = EvalStore.open(dir, { x: 1 });
  store.close();
  const file = path.join(dir, TRAJECTORIES_FILE);
  appendFileSync(file, [record('a', 1), record('b', 0), record('a', 0)].map((r) => JSON.stringify(r) + '\n').join(''));
  const reopened = EvalStore.open(dir, { x: 1 });
  assert.equal(reopened.done('d', 'a')?.errors, 0, 'the last line counts');
  reopened.close();
  assert.deepEqual(
    lines(dir).map((l) => [l.id, l.errors]),
    [
      ['b', 0],
      ['a', 0],
    ],
  );
});

test('a folder that is not an evaluation (index.html or trajectories.jsonl, no eval.json) is refused, its files untouched', () => {
  for (const name of ['index.html', TRAJECTORIES_FILE]) {
    const dir = mkdtempSync(path.join(tmpdir(), 'trace-eval-foreign-'));
    const file = path.join(dir, name);
    writeFileSync(file, 'someone else’s file, not JSON lines\n');
    assert.throws(
      () => EvalStore.open(dir, { x: 1 }),
      (e: Error) => e instanceof EvalError && e.message.includes(`holds ${name} but no eval.json`) && /use another --out folder/.test(e.message),
    );
    assert.equal(readFileSync(file, 'utf8'), 'someone else’s file, not JSON lines\n');
  }
});
