/** `trace-rl faults serve`: the fault server as a command, for rehearsing against any client. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { BIN } from './crash-harness.ts';
import { runCli } from './cli-in-process.ts';

test('trace-rl faults serve fails the asked share of requests and reports counts on Ctrl-C', async () => {
  const child = spawn(process.execPath, [BIN, 'faults', 'serve', '--rate', '1', '--kinds', 'server_error', '--port', '0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  child.stdout.on('data', (d) => (stdout += d));
  const url = await new Promise<string>((resolve, reject) => {
    let err = '';
    child.stderr.on('data', (d) => {
      err += d;
      const m = /(http:\/\/\S+\/v1)/.exec(err);
      if (m) resolve(m[1]!);
    });
    child.on('exit', () => reject(new Error(err)));
  });
  const statuses = [];
  for (let i = 0; i < 3; i++)
    statuses.push(
      (
        await fetch(`${url}/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ prompt: 'Question: x', model: 'm' }),
        })
      ).status,
    );
  assert.ok(
    statuses.every((s) => s >= 500),
    `statuses ${statuses}`,
  );
  child.kill('SIGINT');
  await new Promise((r) => child.on('exit', r));
  const report = JSON.parse(stdout) as { requests: number; faults: Record<string, number> };
  assert.equal(report.requests, 3);
  assert.equal(report.faults.server_error, 3);
});

test('trace-rl faults serve rejects bad options on one line', async () => {
  for (const [args, pattern] of [
    [['--rate', '2'], /--rate/],
    [['--kinds', 'server_error,fire'], /--kinds: "fire"/],
    [['--port', 'x'], /--port/],
  ] as const) {
    const r = await runCli(['faults', 'serve', ...args]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, pattern);
    assert.equal(r.stderr.trim().split('\n').length, 1);
  }
});
