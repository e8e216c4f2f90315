/**
 * `trace-rl train --quiet` against an AgentGym server that hangs (issue 67 item 4): a hostile stand-in,
 * since no real server hangs on demand. Tasks whose /step hangs fail within one env.timeoutMs each,
 * once (no reconnect, no engine retry); a step where only some failed says so on stderr in one line
 * even under --quiet; a step where all failed ends the run in one line, and the process exits right
 * after it (no socket of the hung server keeps it alive). A server that answers every reset differently
 * gives a step with no trajectory at all: that ends the run in one line too, never a silent exit 0.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { BIN, runCli } from '../../helpers/run-cli.ts';

/** `trace-rl …args`: its exit code, stderr, and the seconds from its last stderr line to its exit. */
function runTimed(args: string[]): Promise<{ code: number | null; stderr: string; afterLastLine: number }> {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  let lastLineAt = performance.now();
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
    lastLineAt = performance.now();
  });
  // A process that never exits fails its test (code null) instead of stalling the suite.
  const stuck = setTimeout(() => child.kill('SIGKILL'), 120_000);
  return new Promise((resolve) =>
    child.on('close', (code) => {
      clearTimeout(stuck);
      resolve({ code, stderr, afterLastLine: (performance.now() - lastLineAt) / 1000 });
    }),
  );
}

const root = mkdtempSync(join(tmpdir(), 'trace-stuck-'));
after(() => rmSync(root, { recursive: true, force: true }));

/**
 * An AgentGym stand-in listing one candidate; /step hangs for the tasks in `hangs`, else ends the
 * episode; `drifts`: each reset answers another first observation (a server nondeterministic at reset).
 */
async function standIn(hangs: (task: number) => boolean, drifts = false, drips = false) {
  let resets = 0;
  const taskOf = new Map<number, number>();
  let next = 0;
  const steps = { sent: 0 };
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (d: Buffer) => (text += d.toString()));
    req.on('end', () => {
      const body = (text ? JSON.parse(text) : {}) as { id?: number; data_idx?: number };
      const reply = (v: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(v));
      if (req.url === '/create') return reply(next++);
      if (req.url === '/reset') {
        taskOf.set(body.id!, body.data_idx!);
        const observation = `room ${body.data_idx}${drifts ? ` at ${resets++}` : ''}`;
        return reply({ observation, reward: 0, done: false, info: { candidates: ['open door'] } });
      }
      if (req.url === '/step') {
        steps.sent++;
        if (hangs(taskOf.get(body.id!)!)) {
          if (!drips) return; // never answers
          // Or answers one byte at a time, never finishing.
          res.writeHead(200, { 'content-type': 'application/json' });
          const drip = setInterval(() => res.write(' '), 50);
          res.on('close', () => clearInterval(drip));
          return;
        }
        return reply({ observation: 'out', reward: 1, done: true, info: {} });
      }
      return reply(true);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  after(() => {
    server.closeAllConnections();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, steps };
}

/**
 * A run's config against the stand-in. `timeoutMs`: short where a hang must fail fast, yet well above what
 * a loaded 2-core machine takes to answer a reset (400 ms failed there now and then).
 */
function configFor(url: string, timeoutMs = 1500): string {
  const file = join(root, `config-${url.split(':').at(-1)}.json`);
  writeFileSync(
    file,
    JSON.stringify({
      seed: 1,
      steps: 1,
      pool: 4,
      engine: { maxTurns: 2 },
      strategy: { name: 'grpo', budget: 8 },
      policy: { kind: 'embedded', warmStart: 'none' },
      predictor: { useGold: false },
      env: { kind: 'agentgym', url, tasks: [0, 1, 2, 3], sessions: 8, timeoutMs },
    }),
  );
  return file;
}

test('some tasks hang: the step goes on, and one stderr line under --quiet says how many trajectories failed and why', async () => {
  const { url, steps } = await standIn((task) => task === 1);
  const r = await runCli(['train', '--config', configFor(url), '--out', join(root, 'some'), '--quiet']);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, r.stderr);
  assert.match(
    lines[0]!,
    /^trace-rl train: step 0: (\d+) of 8 trajectories ended in an error at http:\/\/127\.0\.0\.1:\d+ and are not trained on \(tool_error ×\1; first: .*POST \/step: no answer within 1500 ms \(env\.timeoutMs\)/,
  );
  const failed = Number(/: (\d+) of 8/.exec(lines[0]!)![1]);
  // Task 1's trajectories each sent /step once: the hang is not retried.
  assert.equal(steps.sent, 8, `every trajectory sent one step (${failed} of them to the hung task), none twice`);
});

test('every task hangs, or drips its answers: the run ends in one line naming the server, and the process exits right after it', async () => {
  for (const [what, drips, said] of [
    ['hang', false, 'no answer within 1500 ms'],
    ['drip', true, 'the answer did not arrive whole within 1500 ms'],
  ] as const) {
    const { url, steps } = await standIn(() => true, false, drips);
    const t0 = Date.now();
    const r = await runTimed(['train', '--config', configFor(url), '--out', join(root, `all-${what}`), '--quiet']);
    const seconds = (Date.now() - t0) / 1000;
    assert.equal(r.code, 1, r.stderr);
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0]!, new RegExp(`^trace-rl train: the environment server failed: all 8 trajectories of step 0 ended in an error .*${said}`), what);
    assert.equal(steps.sent, 8, `${what}: one /step per trajectory, none retried`);
    // Liveness with a wide margin: 8 trajectories × one 1.5 s timeout, not attempts × reconnects × timeouts (and no socket of the server keeping the process up).
    assert.ok(seconds < 60, `${what}: exited after ${seconds} s`);
    assert.ok(r.afterLastLine < 5, `${what}: exited ${r.afterLastLine} s after its last line (no socket of the server keeps it alive)`);
  }
});

test('a server nondeterministic at reset: no trajectory runs, and the run ends in one line instead of a silent step that trained nothing', async () => {
  const { url, steps } = await standIn(() => false, true);
  // Nothing hangs here: a long timeout, so a slow answer on a loaded machine is not taken for the drift.
  const r = await runCli(['train', '--config', configFor(url, 30_000), '--out', join(root, 'drift'), '--quiet']);
  assert.equal(r.code, 1, r.stderr);
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, r.stderr);
  assert.match(
    lines[0]!,
    /^trace-rl train: the environment server failed: no trajectory of step 0 ran: every reset or restore was refused by the replay check/,
  );
  assert.equal(steps.sent, 0);
});
