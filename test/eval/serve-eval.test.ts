/**
 * `trace-rl eval` end to end against real servers: `trace-rl serve` (llama.cpp, a tiny random-weight
 * llama GGUF written by the project, loaded once for this file) as the OpenAI-compatible endpoint, and
 * `trace-rl retriever serve` over the bundled HotpotQA paragraphs as the Search-R1 retriever, on the
 * real datasets. An evaluation killed with SIGKILL part-way and run again must give exactly the table
 * of an uninterrupted one.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { TRAJECTORIES_FILE } from '../../src/eval/index.ts';
import { BIN, runCli } from '../helpers/run-cli.ts';
import { fixture, writeTemp } from '../tinylm/fixtures.ts';

const { model } = fixture({ context: 2048 }, 11);
const gguf = writeTemp(model, 'eval-tiny.gguf');
let llm: ChildProcess;
let retriever: ChildProcess;
let llmUrl: string;
let retrieverUrl: string;

/** Starts a trace-rl server command and resolves with the URL it prints on stderr. */
function start(args: string[], pattern: RegExp): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  return new Promise((resolve, reject) => {
    let err = '';
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = pattern.exec(err);
      if (m) resolve({ child, url: m[1]! });
    });
    child.once('exit', (code) => reject(new Error(`${args[0]} exited with ${code}: ${err}`)));
  });
}

before(async () => {
  const [a, b] = await Promise.all([
    start(['serve', '--model', gguf, '--port', '0', '--parallel', '1'], /at (http:\/\/\S+\/v1)/),
    start(['retriever', 'serve', '--dataset', 'hotpotqa', '--port', '0'], /at (http:\/\/\S+)\/retrieve/),
  ]);
  ({ child: llm, url: llmUrl } = a);
  ({ child: retriever, url: retrieverUrl } = b);
});

after(() => {
  llm?.kill('SIGTERM');
  retriever?.kill('SIGTERM');
});

const args = (out: string) => [
  'eval',
  '--policy',
  'openai',
  '--base-url',
  llmUrl,
  '--model',
  'eval-tiny',
  '--env',
  'qa',
  '--datasets',
  'hotpotqa,bamboogle:eval',
  '--retrieval',
  'url',
  '--retriever-url',
  retrieverUrl,
  '--questions',
  '4',
  '--samples',
  '2',
  '--temperature',
  '1',
  '--seed',
  '3',
  '--max-turns',
  '3',
  '--max-tokens',
  '24',
  '--concurrency',
  '1',
  '--out',
  out,
  '--json',
  '--quiet',
];

test('eval against trace-rl serve and the retriever server; a killed eval resumes to the same table', async () => {
  const whole = mkdtempSync(path.join(tmpdir(), 'eval-whole-'));
  const first = await runCli(args(whole));
  assert.equal(first.code, 0, first.stderr);
  const table = JSON.parse(first.stdout) as { datasets: Record<string, { n: number; em: number; f1: number }>; average: { em: number; f1: number } };
  assert.deepEqual(Object.keys(table.datasets), ['hotpotqa', 'bamboogle']);
  assert.equal(table.datasets.hotpotqa!.n, 4);
  const records = readFileSync(path.join(whole, TRAJECTORIES_FILE), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { samples: unknown[]; tree: { nodes: Record<string, { turn?: { text?: string; observation: string } }> } });
  assert.equal(records.length, 8);
  assert.ok(records.every((r) => r.samples.length === 2));
  const turns = records.flatMap((r) => Object.values(r.tree.nodes).filter((n) => n.turn));
  assert.ok(turns.length >= 16 && turns.every((t) => typeof t.turn!.text === 'string'), 'every turn is the server’s generated text');

  // Killed part-way (SIGKILL: no clean-up at all), then the same command again.
  const killed = mkdtempSync(path.join(tmpdir(), 'eval-killed-'));
  const child = spawn(process.execPath, [BIN, ...args(killed)], { stdio: 'ignore' });
  const file = path.join(killed, TRAJECTORIES_FILE);
  await new Promise<void>((resolve, reject) => {
    const poll = setInterval(() => {
      const n = existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0;
      if (n >= 3) {
        clearInterval(poll);
        child.kill('SIGKILL');
        resolve();
      }
    }, 20);
    child.once('exit', () => {
      clearInterval(poll);
      reject(new Error('the evaluation finished before it could be killed'));
    });
  });
  await new Promise((r) => child.once('exit', r));
  const partial = readFileSync(file, 'utf8').split('\n').filter(Boolean).length;
  assert.ok(partial >= 3 && partial < 8, `killed after ${partial} questions`);
  const resumed = await runCli(args(killed));
  assert.equal(resumed.code, 0, resumed.stderr);
  // The same table; only the folder it names differs (each evaluation writes its own).
  const withoutOut = ({ out: _, ...rest }: Record<string, unknown>) => rest;
  const again = JSON.parse(resumed.stdout) as Record<string, unknown>;
  assert.equal(again.out, killed);
  assert.deepEqual(withoutOut(again), withoutOut(table as Record<string, unknown>));
});
