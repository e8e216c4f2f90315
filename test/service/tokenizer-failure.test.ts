/**
 * The rollout service with `--tokenizer server` when the server's /tokenize fails: it used to exit 2
 * (a usage error) with no `done` event, so a trainer reading the events waited for an end that never
 * came. Now, wherever the tokenizer fails (at start, in a token-mode call, while a batch is written),
 * the last stdout line is `done` with status failed, stderr has one line naming the tokenizer, and
 * the exit code is 1 (the server failed, as when every call fails).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../helpers/run-cli.ts';
import { startFlakyServer } from './flaky-server.ts';

const root = mkdtempSync(join(tmpdir(), 'trace-rollout-tok-'));
let n = 0;
const ARGS = ['--extras', 'vllm', '--tokenizer', 'server', '--steps', '2', '--pool', '4', '--budget', '8', '--set', 'env.questions=300', '--quiet'];

async function run(tokenizer: (n: number) => 'ok' | 'error500', extra: string[] = []) {
  const server = await startFlakyServer({ tokenizer });
  const out = join(root, `run${n++}`);
  try {
    return { ...(await runCli(['rollout', '--policy', 'openai', '--base-url', server.url, '--out', out, ...ARGS, ...extra])), out, url: server.url };
  } finally {
    await server.close();
  }
}

function assertDone(r: Awaited<ReturnType<typeof run>>) {
  assert.equal(r.code, 1, r.stderr);
  const events = r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const last = events.at(-1)!;
  assert.equal(last.event, 'done', `the last event is done: ${r.stdout}`);
  assert.equal(last.status, 'failed');
  assert.match(String(last.error), /tokenize: HTTP 500/);
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, r.stderr);
  assert.match(lines[0]!, /^trace-rl rollout: the server tokenizer failed: .*\/(de)?tokenize: HTTP 500/);
}

test('the tokenizer fails from the start: done (failed), exit 1', async () => {
  assertDone(await run(() => 'error500'));
});

test('the tokenizer fails once the run is under way (writing a batch): done (failed), exit 1', async () => {
  // The first call (the model's BOS, at start) answers; every later one fails.
  assertDone(await run((k) => (k === 0 ? 'ok' : 'error500')));
});

test('the tokenizer fails inside a token-mode policy call: done (failed), exit 1', async () => {
  assertDone(await run((k) => (k === 0 ? 'ok' : 'error500'), ['--mode', 'tokens']));
});
