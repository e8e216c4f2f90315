/**
 * `trace-rl eval` and `trace-rl diagnose` skip a question whose prompt does not fit the policy's
 * context, as training does (issue 67 item 4), and count it: the policy is OpenAI-compatible, served by
 * `trace-rl serve`'s app in front of llama.cpp with the project's tiny GGUF (context 512); the questions
 * are a JSONL dataset in the world's words (the tiny model's vocabulary), one of them lengthened past
 * the context. Before, that question ran and scored 0 as an error (`context_overflow`) inside n.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { TRAJECTORIES_FILE } from '../../src/eval/index.ts';
import { LlamaEngine } from '../../src/tinylm/index.ts';
import { serveOpenAI } from '../../src/tinylm/openai-server.ts';
import { runCli } from '../reliability/cli-in-process.ts';
import { fixture, writeTemp } from '../tinylm/fixtures.ts';

const CONTEXT = 512;
const root = mkdtempSync(path.join(tmpdir(), 'trace-eval-context-'));
const tiny = fixture({ context: CONTEXT });
const engine = await LlamaEngine.load(writeTemp(tiny.model, 'eval-context.gguf'), { sequences: 1 });
const server = await serveOpenAI(engine, { modelName: 'tiny', port: 0 });
after(async () => {
  await server.close();
  await engine.dispose();
  rmSync(root, { recursive: true, force: true });
});

const words = tiny.env.train
  .slice(0, 30)
  .map((p) => p.question)
  .join(' ');
/** Rows of a qa JSONL file: the world's questions, those at `long` lengthened far past the context. */
function dataset(name: string, count: number, long: ReadonlySet<number>): string {
  const rows = tiny.env.test
    .slice(0, count)
    .map((p, i) => ({ id: `q${i}`, question: long.has(i) ? `${p.question} ${words}` : p.question, answer: p.answers[0] }));
  const file = path.join(root, `${name}.jsonl`);
  writeFileSync(file, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return file;
}

/** The policy (trace-rl serve's tiny model), the dataset and the turn bounds eval and diagnose share here. */
const asked = (data: string) => [
  '--policy',
  'openai',
  '--base-url',
  `${server.url}/v1`,
  '--model',
  'tiny',
  '--env',
  'qa',
  '--datasets',
  data,
  '--max-turns',
  '2',
  '--max-tokens',
  '16',
];
const evalArgs = (data: string, out: string) => ['eval', ...asked(data), '--split', 'all', '--out', out, '--json', '--quiet'];

test('eval: the question too long for the context is skipped before it runs, named on stderr and counted beside n', async () => {
  const out = path.join(root, 'one-long');
  const r = await runCli(evalArgs(dataset('mixed', 4, new Set([2])), out));
  assert.equal(r.code, 0, r.stderr);
  const said = r.stderr.split('\n').filter((l) => /skipped at setup/.test(l));
  assert.equal(said.length, 1, r.stderr);
  assert.match(
    said[0]!,
    /^trace-rl eval: 1 of 4 tasks skipped at setup: the first observation does not fit policy openai:tiny's context: task "q2" takes \d+ tokens \+ 16 for the first turn, more than the context of 512; use a model with a longer context, a lower --max-tokens, or shorten the tasks' first observations$/,
  );
  const json = JSON.parse(r.stdout) as { datasets: Record<string, { n: number; errors: number; skipped: number }> };
  const [row] = Object.values(json.datasets);
  assert.deepEqual({ n: row!.n, errors: row!.errors, skipped: row!.skipped }, { n: 3, errors: 0, skipped: 1 }, 'n counts the questions that ran');
  const ran = readFileSync(path.join(out, TRAJECTORIES_FILE), 'utf8')
    .trim()
    .split('\n')
    .map((l) => (JSON.parse(l) as { id: string }).id);
  assert.deepEqual(ran.sort(), ['q0', 'q1', 'q3'], 'the long question has no trajectory');
  assert.match(readFileSync(path.join(out, 'index.html'), 'utf8'), /skipped at setup: 1 questions whose prompt does not fit the policy's context/);
});

test('eval: a dataset whose every question is too long fails in one line, before any rollout', async () => {
  const out = path.join(root, 'all-long');
  const r = await runCli(evalArgs(dataset('long', 2, new Set([0, 1])), out));
  assert.equal(r.code, 2, r.stderr);
  assert.match(
    r.stderr,
    /^trace-rl: eval: dataset long: all 2 questions are too long for policy openai:tiny's context of 512 tokens, none is left to evaluate; the first: task "q0" takes \d+ tokens \+ 16 for the first turn, more than the context of 512; use a model with a longer context, a lower --max-tokens, or shorten the tasks' first observations\n$/,
  );
  assert.equal(existsSync(out), false, 'no evaluation folder was opened');
});

test('diagnose: refused prompts are replaced by the next of the seeded order, counted in the header', async () => {
  // Three that fit and three too long: the sample of three is the three that fit, whatever the order
  // (seed 3 puts long ones among the first three, so some are asked and replaced).
  const data = dataset('diag', 6, new Set([0, 2, 4]));
  const r = await runCli(['diagnose', ...asked(data), '--prompts', '3', '--k', '2', '--seed', '3', '--json', '--quiet']);
  assert.equal(r.code, 0, r.stderr);
  const d = JSON.parse(r.stdout) as { prompts: number; skipped?: number; failed: number };
  assert.equal(d.prompts, 3);
  assert.ok((d.skipped ?? 0) >= 1, `the seeded order meets a long prompt among its first three: ${r.stderr}`);
  assert.equal(d.failed, 0, 'no trajectory ran into the context');
  assert.match(r.stderr, new RegExp(`^trace-rl diagnose: ${d.skipped} of ${3 + d.skipped!} tasks skipped at setup: `, 'm'));
});
