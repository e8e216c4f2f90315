/**
 * `trace-rl serve` had no connection cap: a client could open sockets and never send (or never close
 * them) until the process ran out of file descriptors. Now it holds at most --max-connections open
 * connections (default 256): one past it is closed as soon as it is accepted, a stderr line says so,
 * and once sockets close the server answers again. Real command, real sockets, a project-written GGUF.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { test } from 'node:test';
import { fixture, writeTemp } from '../tinylm/fixtures.ts';
import { runCli } from '../helpers/run-cli.ts';
import { startServerCli } from '../helpers/server-cli.ts';

const { model } = fixture({}, 4);
const file = writeTemp(model, 'tiny.gguf');

/** A connected socket that sends nothing (the attack: hold a connection open). */
function idle(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => resolve(s));
    s.once('error', reject);
  });
}

/** Whether the server closes `s` within `ms` without answering (a dropped connection) while it sends a request. */
function closedUnanswered(s: Socket, ms = 2000): Promise<boolean> {
  return new Promise((resolve) => {
    let data = '';
    s.on('data', (d: Buffer) => (data += d.toString()));
    s.on('error', () => {});
    s.once('close', () => resolve(data === ''));
    setTimeout(() => resolve(false), ms);
    s.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  });
}

async function capHolds(args: string[], cap: number): Promise<void> {
  const server = await startServerCli(['serve', '--model', file, '--port', '0', ...args]);
  const port = Number(new URL(server.url).port);
  const held: Socket[] = [];
  try {
    for (let i = 0; i < cap; i++) held.push(await idle(port));
    // Give the server a moment to have accepted every one of them.
    await new Promise((r) => setTimeout(r, 200));
    const extra = await idle(port);
    assert.equal(await closedUnanswered(extra), true, `connection ${cap + 1} is closed unanswered`);
    assert.match(server.stderr(), new RegExp(`trace-rl serve: ${cap} connections are open \\(--max-connections\\); closing new ones`));
    for (const s of held.splice(0, 2)) s.destroy();
    await new Promise((r) => setTimeout(r, 200));
    const health = await fetch(`${server.url}/health`);
    assert.equal(health.status, 200, 'served again once connections close');
  } finally {
    for (const s of held) s.destroy();
    await server.stop('SIGTERM');
  }
}

test('--max-connections 4: the fifth connection is closed at once; the server answers again when one closes', async () => {
  await capHolds(['--max-connections', '4'], 4);
});

test('the default cap is 256', async () => {
  await capHolds([], 256);
});

test('--max-connections takes a whole number ≥ 1', async () => {
  for (const bad of ['0', 'x', '-1']) {
    const r = await runCli(['serve', '--model', file, '--max-connections', bad]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /--max-connections/);
  }
});
