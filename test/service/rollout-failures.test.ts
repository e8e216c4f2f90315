/**
 * The rollout service against a real node:http server that fails: a step whose every trajectory
 * failed ends the run loudly (exit 1, one stderr line naming the server and the cause, nothing passed
 * off as a batch); a step that partly failed writes only the rows it has, marked partial, and says so.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
// The CLI runs in this process (a spawned one costs ~1.5 s of CPU to load); Ctrl-C below needs its own process.
import { runCli } from '../reliability/cli-in-process.ts';
import { codepointTokenizer } from '../../src/tokens/index.ts';
import { batchMetaFile, RolloutStepFailed, runRolloutService, WeightsGate, weightsReadyFile, type RolloutServiceEvent } from '../../src/service/index.ts';
import { OpenAIPolicy } from '../../src/policy/index.ts';
import { RunStore } from '../../src/store/index.ts';
import { startFlakyServer, type Behaviour } from './flaky-server.ts';

const root = mkdtempSync(join(tmpdir(), 'trace-rollout-fail-'));
let n = 0;
const fresh = () => join(root, `run${n++}`);
const ARGS = [
  '--extras',
  'vllm',
  '--tokenizer',
  'codepoints',
  '--steps',
  '1',
  '--pool',
  '4',
  '--budget',
  '8',
  '--set',
  'env.questions=300',
  '--set',
  'engine.retry.baseDelayMs=1',
  '--set',
  'engine.retry.maxAttempts=2',
];

async function failingRun(behaviour: Behaviour, extra: string[] = []) {
  const server = await startFlakyServer({ behaviour: () => behaviour });
  const out = fresh();
  try {
    const t0 = performance.now();
    const r = await runCli(['rollout', '--policy', 'openai', '--base-url', server.url, '--out', out, '--quiet', ...ARGS, ...extra]);
    return { ...r, out, url: server.url, ms: performance.now() - t0, requests: server.completions };
  } finally {
    await server.close();
  }
}

function assertLoudFailure(r: Awaited<ReturnType<typeof failingRun>>, cause: RegExp) {
  assert.equal(r.code, 1, r.stderr);
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, `one stderr line:\n${r.stderr}`);
  assert.match(lines[0]!, /^trace-rl rollout: 8 of 8 trajectories of step 0 ended in an error after the engine's retries/);
  assert.ok(lines[0]!.includes(r.url), `the line names the server: ${lines[0]}`);
  assert.match(lines[0]!, cause);
  assert.match(lines[0]!, /no batch was written/);
  const events = r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.deepEqual(
    events.map((e) => [e.event, e.status]),
    [['done', 'failed']],
    'no batch event: nothing is passed off as a batch',
  );
  assert.ok(!existsSync(r.out), 'a run whose first step failed leaves nothing behind');
}

test('server answering HTTP 500: exit 1, one line naming the server and the status', async () => {
  const r = await failingRun('error500');
  assertLoudFailure(r, /server_error ×8; first: server_error: http:\/\/127\.0\.0\.1:\d+\/v1: HTTP 500/);
  assert.ok(r.requests >= 16, 'every trajectory was tried with its retries');
});

test('server answering garbage (not JSON): exit 1, parse_error named', async () => {
  const r = await failingRun('garbage');
  assertLoudFailure(r, /parse_error ×8/);
});

test('server that stalls: bounded by engine.timeoutMs, exit 1, timeout named', async () => {
  const r = await failingRun('stall', ['--set', 'engine.timeoutMs=300', '--set', 'engine.retry.maxAttempts=1']);
  assertLoudFailure(r, /timeout ×8; first: timeout: no answer after 300 ms/);
  // 8 trajectories of one 300 ms call each, 4 in flight: well under a minute even on a loaded machine.
  assert.ok(r.ms < 60_000, `took ${Math.round(r.ms)} ms`);
});

test('server that is not there (connection refused): exit 1, the cause named', async () => {
  const { createServer } = await import('node:net');
  const port = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
  const out = fresh();
  const url = `http://127.0.0.1:${port}/v1`;
  const r = await runCli(['rollout', '--policy', 'openai', '--base-url', url, '--out', out, '--quiet', ...ARGS]);
  assertLoudFailure({ ...r, out, url, ms: 0, requests: 0 }, /connection failed: .*ECONNREFUSED/);
});

test('server going down mid-step: the partial batch holds only the finished rows, marked partial; the next step fails, earlier batches kept', async () => {
  // A bare rollout needs two calls (search, then answer) and continuations start only after them, so
  // once 8 calls have been answered some trajectories have finished and the continuations have not,
  // whatever order the engine makes the calls in.
  const server = await startFlakyServer({ behaviour: (i) => (i < 8 ? 'ok' : 'down') });
  const out = fresh();
  const policy = new OpenAIPolicy({ baseURLs: [server.url], model: 'm' });
  const gate = new WeightsGate({ dir: out, pollMs: 20 });
  const events: RolloutServiceEvent[] = [];
  const config = {
    steps: 2,
    pool: 4,
    strategy: { name: 'trace', budget: 8 },
    env: { questions: 300 },
    engine: { concurrency: 1, retry: { baseDelayMs: 1, maxAttempts: 1 } },
  };
  try {
    const onEvent = (e: RolloutServiceEvent) => {
      events.push(e);
      if (e.kind === 'waiting') writeFileSync(weightsReadyFile(out, e.step), '');
    };
    const failed = await runRolloutService({
      out,
      config,
      policy,
      format: 'jsonl',
      tokenizer: codepointTokenizer,
      gate,
      clock: () => performance.now(),
      onEvent,
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(failed instanceof RolloutStepFailed, `step 1 fails: ${String(failed)}`);
    assert.equal(failed.step, 1);
    assert.equal(failed.failures.failed, failed.failures.trajectories);
    assert.match(failed.message, new RegExp(`server ${server.url.replace(/[./]/g, '\\$&')}`));

    const batch = events.find((e): e is Extract<RolloutServiceEvent, { kind: 'batch' }> => e.kind === 'batch')!;
    assert.equal(batch.step, 0);
    assert.equal(batch.status, 'partial');
    assert.ok(batch.failures.failed > 0 && batch.rows > 0, `some failed (${batch.failures.failed}), some finished (${batch.rows})`);
    assert.equal(server.completions, 9, 'the server went down at the 9th call and was not reached again');
    assert.equal(batch.rows + batch.failures.failed, batch.failures.trajectories, 'every finished trajectory is a row, every failed one is missing');
    const rows = readFileSync(batch.file, 'utf8').trim().split('\n');
    assert.equal(rows.length, batch.rows, 'the file holds exactly the rows it says');
    const meta = JSON.parse(readFileSync(batchMetaFile(out, 0), 'utf8')) as Record<string, unknown>;
    assert.deepEqual([meta.status, meta.failed_leaves, meta.rows], ['partial', batch.failures.failed, batch.rows]);

    const store = RunStore.open(out, { readonly: true });
    try {
      assert.equal(store.lastStep(), 0, 'the failed step is not stored; step 0 is kept');
    } finally {
      store.close();
    }
    assert.ok(existsSync(batch.file), 'the earlier batch is kept');
    assert.ok(!existsSync(join(out, 'batches', 'step-1.jsonl')), 'no batch for the failed step');
  } finally {
    await gate.close();
    await server.close();
  }
});

test('a healthy step says what it does on stderr: the start, the batch and a per-step summary; the batch is complete', async () => {
  const server = await startFlakyServer();
  const out = fresh();
  try {
    const r = await runCli(['rollout', '--policy', 'openai', '--base-url', server.url, '--out', out, '--format', 'jsonl', ...ARGS]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, new RegExp(`^trace-rl rollout: 1 step\\(s\\) of 8 trajectories from ${server.url.replace(/[./]/g, '\\$&')}`));
    assert.match(r.stderr, /trace-rl rollout: step 0: batch .*step-0\.jsonl: \d+ rows, complete/);
    assert.match(r.stderr, /trace-rl rollout step 1\/1 traj 8 reward/);
    assert.doesNotMatch(r.stderr, /ended in an error/);
    const batch = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((e) => e.event === 'batch')!;
    assert.deepEqual([batch.status, batch.failed], ['complete', 0]);
  } finally {
    await server.close();
  }
});

test('the start line names the unit of the budget: a token budget of 600 is "600 tokens", not trajectories (issue 69)', async () => {
  // The line is written before the first step; a server that is not there ends the run right after.
  const r = await runCli([
    'rollout',
    '--policy',
    'openai',
    '--base-url',
    'http://127.0.0.1:9/v1',
    '--out',
    fresh(),
    ...ARGS,
    '--budget',
    '600',
    '--set',
    'strategy.unit=tokens',
  ]);
  assert.match(r.stderr, /^trace-rl rollout: 1 step\(s\) of 600 tokens from /);
  assert.doesNotMatch(r.stderr, /600 trajectories/);
});

test('a step that partly failed: exit 0, one stderr line saying how many failed and why, the batch marked partial', async () => {
  const server = await startFlakyServer({ behaviour: (i) => (i % 3 === 2 ? 'error500' : 'ok') });
  const out = fresh();
  try {
    const r = await runCli([
      'rollout',
      '--policy',
      'openai',
      '--base-url',
      server.url,
      '--out',
      out,
      '--quiet',
      ...ARGS,
      '--set',
      'engine.retry.maxAttempts=1',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const batch = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((e) => e.event === 'batch')!;
    assert.equal(batch.status, 'partial');
    const failed = batch.failed as number;
    assert.ok(failed > 0 && failed < 8, `some failed: ${failed}`);
    assert.equal(batch.rows, 8 - failed);
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    assert.equal(
      lines[0],
      `trace-rl rollout: ${failed} of 8 trajectories of step 0 ended in an error after the engine's retries (server_error ×${failed}; first: server_error: ${server.url}: HTTP 500: 500 internal error (attempt 1 of 1)); the batch holds the ${8 - failed} rows of the others and is marked partial (${batch.file}, and its .meta.json)`,
    );
    assert.equal(JSON.parse(readFileSync(batchMetaFile(out, 0), 'utf8')).status, 'partial');
  } finally {
    await server.close();
  }
});

test('Ctrl-C while the service waits for weights: a clean stop, done "stopped", exit 130', async () => {
  const { spawn } = await import('node:child_process');
  const { createInterface } = await import('node:readline');
  const { BIN } = await import('../helpers/run-cli.ts');
  const server = await startFlakyServer();
  const out = fresh();
  try {
    const child = spawn(process.execPath, [BIN, 'rollout', '--policy', 'openai', '--base-url', server.url, '--out', out, '--quiet', ...ARGS, '--steps', '2'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const events: Array<Record<string, unknown>> = [];
    createInterface({ input: child.stdout }).on('line', (l) => {
      const e = JSON.parse(l) as Record<string, unknown>;
      events.push(e);
      if (e.event === 'waiting') child.kill('SIGINT');
    });
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    assert.equal(code, 130);
    assert.deepEqual(
      events.map((e) => e.event),
      ['batch', 'waiting', 'done'],
    );
    assert.equal(events.at(-1)!.status, 'stopped');
    assert.ok(existsSync(String(events[0]!.file)), 'the batch written before the stop is kept');
  } finally {
    await server.close();
  }
});

test('batches without usable log-probabilities (a server that returns no token ids) are said to be so, once', async () => {
  const server = await startFlakyServer();
  try {
    const r = await runCli(['rollout', '--policy', 'openai', '--base-url', server.url, '--out', fresh(), '--quiet', ...ARGS, '--extras', 'none']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(
      r.stderr,
      "trace-rl rollout: none of the 8 rows has rollout log-probabilities matched to its token ids (response_logprobs are 0, logprobs_known false): the embedded policy samples no tokens (its ids are the tokenizer's encoding of the chosen text), and a server must return token ids with its log-probabilities (trace-rl rollout --extras vllm, or --mode tokens); use these rows to test a pipeline, not to train on\n",
    );
  } finally {
    await server.close();
  }
});
