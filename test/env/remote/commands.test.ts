/**
 * The commands beyond `train` and `diagnose` (world-over-the-wire.test.ts, python-example.test.ts) on
 * an environment served over the wire, unchanged: the real `trace-rl` CLI in child processes against
 * the world served over OpenEnv by the same server code as `trace-rl env serve`, one server for the
 * file, at the smallest sizes that still show it.
 *  - `eval` (the untrained embedded policy, on the server's candidate lists) evaluates exactly the
 *    held-out tasks asked for, none failed, and writes eval.json, one trajectory line a question and
 *    its page.
 *  - `compare` of trace and grpo, one step: both `train` children run on the server, trace's
 *    continuations restored by replay with no mismatch; its report names what the replay cost, the
 *    numbers the run stored (the mismatch note is world-over-the-wire's).
 *  - `export --format jsonl` of compare's trace run (a `train` run made over the wire): rows.
 *  - `rollout` with an OpenAI-compatible policy (the stand-in server of test/policy) over the wire:
 *    its batch file, rows from the served tasks with the world's search results, and the run ends
 *    finished.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ServedEnv } from '../../../src/env/remote/serve/served-env.ts';
import { serveEnvironment } from '../../../src/env/remote/serve/servers.ts';
import { worldKind } from '../../../src/env/world/kind.ts';
import { RunStore } from '../../../src/store/index.ts';
import { runCli } from '../../helpers/run-cli.ts';
import { startStandIn } from '../../policy/openai-stand-in.ts';

const root = mkdtempSync(join(tmpdir(), 'trace-wire-commands-'));
const MAX_TURNS = 5;
const served = await worldKind.build(worldKind.schema.parse({ kind: 'world', seed: 5, questions: 60 }), { maxTurns: MAX_TURNS });
const server = await serveEnvironment(new ServedEnv(served, 'world', { maxSessions: 32 }), 'openenv', { port: 0, maxBodyBytes: 1 << 20 });
after(async () => {
  await server.close();
  rmSync(root, { recursive: true, force: true });
});

/** 8 training tasks and 4 held-out ones, the served world's own test prompts (env serve numbers train first). */
const HELD_OUT = 4;
const first = served.train.length;
const env = {
  kind: 'openenv',
  url: server.url,
  tasks: { from: 0, to: 8 },
  testTasks: { from: first, to: first + HELD_OUT },
  questionAfter: 'Question: ',
  successThreshold: 0.3,
  action: { text: 'action' },
  sessions: 4,
};
const configFile = join(root, 'config.json');
writeFileSync(
  configFile,
  JSON.stringify({
    env,
    pool: 4,
    engine: { maxTurns: MAX_TURNS },
    predictor: { useGold: false },
    policy: { kind: 'embedded', warmStart: 'none' },
    eval: { every: 1, questions: HELD_OUT },
  }),
);

function storedRun(dir: string) {
  const s = RunStore.open(dir, { readonly: true });
  try {
    return { status: s.status(), steps: s.steps() };
  } finally {
    s.close();
  }
}

test('eval on a server environment: the held-out tasks asked for, none failed; eval.json, a trajectory line a question, the page', async () => {
  const out = join(root, 'eval');
  const sets = Object.entries(env).flatMap(([k, v]) => ['--set', `env.${k}=${JSON.stringify(v)}`]);
  const r = await runCli(['eval', '--policy', 'embedded', ...sets, '--max-turns', String(MAX_TURNS), '--questions', '3', '--out', out, '--json', '--quiet']);
  assert.equal(r.code, 0, r.stderr);
  const result = JSON.parse(r.stdout) as { datasets: Record<string, { n: number; errors: number; accuracy: number }> };
  assert.deepEqual(Object.keys(result.datasets), ['openenv']);
  assert.equal(result.datasets.openenv!.n, 3, '--questions 3 of the 4 held-out tasks');
  assert.equal(result.datasets.openenv!.errors, 0);
  const { spec } = JSON.parse(readFileSync(join(out, 'eval.json'), 'utf8')) as { spec: { env: { kind: string }; questions: number } };
  assert.deepEqual([spec.env.kind, spec.questions], ['openenv', 3], 'eval.json records the server environment and the count');
  const lines = readFileSync(join(out, 'trajectories.jsonl'), 'utf8').trim().split('\n');
  const ids = lines.map((l) => (JSON.parse(l) as { id: string }).id);
  assert.deepEqual(ids.sort(), [first, first + 1, first + 2].map((n) => `seed-${n}`).sort(), 'the first held-out tasks, by their seeds');
  assert.ok(existsSync(join(out, 'index.html')));
});

const compareOut = join(root, 'compare');

test('compare of trace and grpo on a server environment: both runs finish, trace restores prefixes by replay, and the report says what that cost', async () => {
  const r = await runCli([
    'compare',
    '--config',
    configFile,
    '--strategies',
    'trace,grpo',
    '--trace',
    'paper',
    '--seeds',
    '1',
    '--steps',
    '1',
    '--budget',
    '16',
    '--out',
    compareOut,
    '--quiet',
  ]);
  assert.equal(r.code, 0, r.stderr);
  for (const arm of ['trace-s0', 'grpo-s0']) {
    const run = storedRun(join(compareOut, arm));
    assert.equal(run.status, 'finished', arm);
    assert.equal(run.steps.length, 1, arm);
    assert.equal(run.steps[0]!.metrics.replay_mismatches ?? 0, 0, `${arm}: no replay differed`);
  }
  const trace = storedRun(join(compareOut, 'trace-s0')).steps[0]!.metrics;
  assert.ok(trace.replay_restores! > 0, 'trace branched at stored prefixes, restored by replay over the wire');
  const report = readFileSync(join(compareOut, 'report.html'), 'utf8');
  assert.ok(
    report.includes(`trace-s0: prefixes restored by replay: ${trace.replay_restores} restores, ${trace.replay_steps} environment steps`),
    'the report names the trace run’s replay cost, as stored',
  );
  // Each arm's load on the server beside its tokens, in the printed table and the report: its stored environment steps.
  assert.match(r.stdout, /tokens\s+env_steps\s+env_s\s/);
  for (const arm of ['trace', 'grpo']) {
    const m = storedRun(join(compareOut, `${arm}-s0`)).steps[0]!.metrics;
    const row = r.stdout.split('\n').find((l) => l.startsWith(`${arm} `));
    assert.ok(row?.split(/\s+/).includes(String(m.env_steps! + m.env_replayed_steps!)), `${arm}: ${row}`);
  }
  assert.ok(report.includes('<th>environment steps</th><th>environment seconds</th>'));
});

test('export --format jsonl of a train run made over the wire (compare’s trace run): rows', async () => {
  const file = join(root, 'trace.jsonl');
  const r = await runCli(['export', join(compareOut, 'trace-s0'), '--format', 'jsonl', '--out', file]);
  assert.equal(r.code, 0, r.stderr);
  const result = JSON.parse(r.stdout) as { rows: number };
  assert.ok(result.rows > 0);
  assert.equal(readFileSync(file, 'utf8').trim().split('\n').length, result.rows);
});

test('rollout with an OpenAI-compatible policy over the wire: one batch of rows from the served tasks, the run finished', async () => {
  const standIn = await startStandIn();
  const out = join(root, 'rollout');
  try {
    const r = await runCli([
      'rollout',
      '--policy',
      'openai',
      '--base-url',
      standIn.url,
      '--config',
      configFile,
      '--steps',
      '1',
      '--budget',
      '8',
      '--format',
      'jsonl',
      '--out',
      out,
      '--quiet',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const events = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { event: string; file?: string; rows?: number; status?: string });
    const batch = events.find((e) => e.event === 'batch')!;
    assert.ok(batch.rows! > 0);
    assert.equal(batch.status, 'complete');
    assert.equal(events.at(-1)!.status, 'finished');
    const rows = readFileSync(batch.file!, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { prompt_id: string; response_text: string });
    assert.equal(rows.length, batch.rows);
    assert.ok(standIn.requests > 0, 'the policy server wrote the turns');
    assert.ok(
      rows.every((row) => /^seed-[0-7]$/.test(row.prompt_id)),
      'every row is one of the served training tasks',
    );
    assert.ok(
      rows.every((row) => row.response_text.includes('<information>Doc 1(Title:')),
      'the served world answered the searches',
    );
  } finally {
    await standIn.close();
  }
});
