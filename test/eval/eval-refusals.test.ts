/**
 * Issue 31, `trace-rl eval` inputs that used to run and mislead: two evaluations writing one --out,
 * a dataset with a duplicate id, an empty dataset, --datasets where it was ignored, a folder as a
 * dataset. Each runs the real CLI: its `main` in this process (test/reliability/cli-in-process.ts,
 * one run at a time), which skips a child process's ~1 CPU-s of loading; only the first of two
 * evaluations on one --out is a child process, since the lock they meet is held by a process ID.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runCli as spawnCli } from '../helpers/run-cli.ts';
import { runCli } from '../reliability/cli-in-process.ts';
import { startStandIn } from '../policy/openai-stand-in.ts';

const root = mkdtempSync(path.join(tmpdir(), 'trace-eval-refuse-'));
let n = 0;
const tmp = () => path.join(root, `out${n++}`);
const write = (name: string, rows: unknown[]) => {
  const file = path.join(root, name);
  writeFileSync(file, rows.map((r) => JSON.stringify(r)).join('\n') + (rows.length ? '\n' : ''));
  return file;
};
const oneLine = (s: string) => s.trim().split('\n').length === 1;

/** A proxy in front of `upstream` that holds every completion request until `open()`: the policy server answers when the test says. */
async function gated(upstream: string): Promise<{ url: string; held(): number; open(): void; close(): Promise<void> }> {
  const target = new URL(upstream);
  let opened = false;
  const waiting: Array<() => void> = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const forward = () => {
        const up = request(
          { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, host: target.host } },
          (answer) => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          },
        );
        up.on('error', () => res.destroy());
        up.end(Buffer.concat(chunks));
      };
      // Only the policy's calls wait: the setup's questions (its context at /v1/models, /props) pass.
      if (opened || !req.url?.endsWith('/completions')) forward();
      else waiting.push(forward);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${target.pathname}`,
    held: () => waiting.length,
    open: () => {
      opened = true;
      for (const f of waiting.splice(0)) f();
    },
    close: () =>
      new Promise((r) => {
        server.close(() => r());
        server.closeAllConnections(); // keep-alive connections of this process's runs
      }),
  };
}

test('two evaluations on one --out: the second is refused while the first runs; the first finishes alone', async () => {
  const standIn = await startStandIn();
  // The first evaluation's policy calls wait until the second has been refused: the first is still
  // running then, however slowly either starts.
  const server = await gated(standIn.url);
  try {
    const data = write('two.jsonl', [
      { id: 'a', question: 'Who?', answer: 'x' },
      { id: 'b', question: 'When?', answer: 'y' },
    ]);
    const out = tmp();
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
      '--max-turns',
      '2',
      '--concurrency',
      '1',
      '--out',
      out,
      '--quiet',
    ];
    // The first is a child process: the lock names the process writing the folder, and this one's own
    // lock would be taken over as its own.
    const first = spawnCli(args);
    // The first has opened the folder once its spec is written, and runs its first question.
    for (let i = 0; i < 600 && !(existsSync(path.join(out, 'eval.json')) && server.held() > 0); i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal(server.held(), 1, 'the first evaluation is waiting for its first answer');
    const second = await runCli(args);
    server.open();
    assert.equal(second.code, 2, second.stderr);
    assert.ok(oneLine(second.stderr), second.stderr);
    assert.match(second.stderr, /is busy: process \d+ is writing this evaluation/);
    const done = await first;
    assert.equal(done.code, 0, done.stderr);
    const lines = readFileSync(path.join(out, 'trajectories.jsonl'), 'utf8').trim().split('\n');
    assert.equal(lines.length, 2, 'each question written once');
    assert.equal(existsSync(path.join(out, 'run.lock')), false, 'the lock is released');
    // Finished: the same command continues (nothing left to run) without a stale lock in the way.
    const again = await runCli(args);
    assert.equal(again.code, 0, again.stderr);
  } finally {
    server.open();
    await server.close();
    await standIn.close();
  }
});

test('a dataset with a duplicate id is refused, naming both lines', async () => {
  const data = write('dup.jsonl', [
    { id: 'q1', question: 'A?', answer: 'a' },
    { id: 'q2', question: 'B?', answer: 'b' },
    { id: 'q1', question: 'C?', answer: 'c' },
  ]);
  const r = await runCli(['eval', '--env', 'qa', '--datasets', data, '--split', 'all', '--policy', 'embedded', '--out', tmp(), '--quiet']);
  assert.equal(r.code, 2, r.stderr);
  assert.ok(oneLine(r.stderr), r.stderr);
  assert.match(r.stderr, new RegExp(`${data}:3: id "q1" is already used on line 1`));
  const math = write('dup-math.jsonl', [
    { id: 7, question: '1+1?', answer: '2' },
    { id: 7, question: '2+2?', answer: '4' },
  ]);
  const m = await runCli([
    'eval',
    '--env',
    'math',
    '--set',
    `env.math.testDataset=${math}`,
    '--policy',
    'openai',
    '--base-url',
    'http://127.0.0.1:9/v1',
    '--out',
    tmp(),
    '--quiet',
  ]);
  assert.equal(m.code, 2, m.stderr);
  assert.match(m.stderr, new RegExp(`${math}:2: id "7" is already used on line 1`));
});

test('an empty dataset and /dev/null are errors, not an empty table', async () => {
  const empty = write('empty.jsonl', []);
  for (const datasets of [empty, '/dev/null']) {
    const r = await runCli(['eval', '--env', 'qa', '--datasets', datasets, '--split', 'all', '--policy', 'embedded', '--out', tmp(), '--quiet']);
    assert.equal(r.code, 2, `${datasets}: ${r.stderr}`);
    assert.ok(oneLine(r.stderr), r.stderr);
    assert.match(r.stderr, new RegExp(datasets.replace(/\//g, '\\/')));
    assert.equal(r.stdout, '');
  }
});

test('--datasets with --env math is honoured (one dataset); with an environment that has none it is refused', async () => {
  const math = write('mine-math.jsonl', [{ question: '1+1?', answer: '2' }]);
  // The openai policy at a closed port: the question is attempted (and errors), so the table names the
  // dataset used; every question failed, so the exit code is 1 (see 'a server that is not there').
  const r = await runCli([
    'eval',
    '--env',
    'math',
    '--datasets',
    math,
    '--policy',
    'openai',
    '--base-url',
    'http://127.0.0.1:9/v1',
    '--retries',
    '1',
    '--out',
    tmp(),
    '--json',
    '--quiet',
  ]);
  assert.equal(r.code, 1, r.stderr);
  assert.deepEqual(Object.keys(JSON.parse(r.stdout).datasets), [math]);
  const two = await runCli([
    'eval',
    '--env',
    'math',
    '--datasets',
    `gsm8k,${math}`,
    '--policy',
    'openai',
    '--base-url',
    'http://127.0.0.1:9/v1',
    '--out',
    tmp(),
    '--quiet',
  ]);
  assert.equal(two.code, 2, two.stderr);
  assert.match(two.stderr, /--datasets: env math evaluates one dataset/);
  const world = await runCli(['eval', '--env', 'world', '--datasets', 'hotpotqa', '--policy', 'embedded', '--out', tmp(), '--quiet']);
  assert.equal(world.code, 2, world.stderr);
  assert.ok(oneLine(world.stderr), world.stderr);
  assert.match(world.stderr, /--datasets is for --env qa or math/);
});

test('--env qa --datasets DIR names the folder', async () => {
  const dir = path.join(root, 'a-folder');
  mkdirSync(dir);
  const r = await runCli(['eval', '--env', 'qa', '--datasets', dir, '--policy', 'embedded', '--out', tmp(), '--quiet']);
  assert.equal(r.code, 2, r.stderr);
  assert.ok(oneLine(r.stderr), r.stderr);
  assert.match(r.stderr, new RegExp(`${dir}: is a folder`));
});

test('a server that is not there: every question fails, the table is not passed off as a score of 0 (exit 1, the error named)', async () => {
  // A real port, listened on and closed, so the connection is refused.
  const { createServer } = await import('node:net');
  const port = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
  const r = await runCli([
    'eval',
    '--env',
    'world',
    '--questions',
    '3',
    '--policy',
    'openai',
    '--base-url',
    `http://127.0.0.1:${port}/v1`,
    '--model',
    'm',
    '--set',
    'engine.retry.maxAttempts=1',
    '--out',
    tmp(),
    '--quiet',
  ]);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /3 of 3 questions ended in an error after the engine's retries \(servers http:\/\/127\.0\.0\.1:\d+\/v1; first: [^)]+\)/);
  assert.match(r.stderr, /every question failed: check the server \(--base-url, --model\)/);
});
