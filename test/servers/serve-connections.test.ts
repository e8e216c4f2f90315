/**
 * `trace-rl serve` holds at most --max-connections open connections (default 256), so a client cannot
 * run the process out of file descriptors. The cap alone locked clients out (issue 68): 256 sockets that
 * send nothing, or drip a header byte now and then, held every slot until Node's 300 s request timeout,
 * and forever for a peer that reconnects. Now a new connection past the cap takes the place of the
 * oldest one without a whole request in flight; only when every connection has one is the new one
 * closed (with a stderr line). Real command, real sockets, a project-written GGUF; the all-busy case on
 * the same listen() with a handler the test holds open (no real request of `serve` can be held open on purpose).
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { test } from 'node:test';
import { Hono } from 'hono';
import { listen } from '../../src/http/index.ts';
import { fixture, writeTemp } from '../tinylm/fixtures.ts';
import { runCli } from '../helpers/run-cli.ts';
import { startServerCli } from '../helpers/server-cli.ts';

const { model } = fixture({}, 4);
const file = writeTemp(model, 'tiny.gguf');

/** A connected socket that sends `first` (nothing by default) and then nothing more unless the caller drips. */
function opened(port: number, first = ''): Promise<Socket & { gone: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => {
      if (first) s.write(first);
      resolve(Object.assign(s, { gone: new Promise<void>((r) => s.once('close', () => r())) }));
    });
    s.on('error', () => {});
    s.once('error', reject);
  });
}

/** Whether the server closes `s` within `ms` without answering (a dropped connection) while it sends a request. */
function closedUnanswered(s: Socket, ms = 2000): Promise<boolean> {
  return new Promise((resolve) => {
    let data = '';
    s.on('data', (d: Buffer) => (data += d.toString()));
    s.once('close', () => resolve(data === ''));
    setTimeout(() => resolve(false), ms);
    s.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  });
}

const settle = () => new Promise((r) => setTimeout(r, 200));

test('--max-connections 4: a fifth connection takes the place of the oldest idle one and is answered', async () => {
  const server = await startServerCli(['serve', '--model', file, '--port', '0', '--max-connections', '4']);
  const port = Number(new URL(server.url).port);
  const held = [];
  try {
    for (let i = 0; i < 4; i++) held.push(await opened(port));
    await settle();
    const health = await fetch(`${server.url}/health`);
    assert.equal(health.status, 200);
    await held[0]!.gone; // the oldest went (the test would time out if it stayed)
    assert.equal(held.slice(1).filter((s) => s.destroyed).length, 0, 'only the oldest');
  } finally {
    for (const s of held) s.destroy();
    await server.stop('SIGTERM');
  }
});

test('the default cap (256) filled with sockets that drip a header byte now and then: /health still answers, again and again', async () => {
  const server = await startServerCli(['serve', '--model', file, '--port', '0']);
  const port = Number(new URL(server.url).port);
  const held: Socket[] = [];
  const drip = setInterval(() => {
    for (const s of held) if (!s.destroyed) s.write('X');
  }, 300);
  try {
    for (let i = 0; i < 256; i++) held.push(await opened(port, 'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Drip: '));
    await settle();
    for (let i = 0; i < 3; i++) {
      const started = performance.now();
      const res = await fetch(`${server.url}/health`, { signal: AbortSignal.timeout(10_000) });
      assert.equal(res.status, 200);
      // A liveness bound with a wide margin: before, /health waited for Node's 300 s request timeout.
      assert.ok(performance.now() - started < 5000);
    }
  } finally {
    clearInterval(drip);
    for (const s of held) s.destroy();
    await server.stop('SIGTERM');
  }
});

test('when every connection has a request in flight, a new one is closed at once and said; once one is answered the server takes new ones', async () => {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const app = new Hono();
  app.get('/slow', async (c) => {
    await held;
    return c.text('done');
  });
  app.get('/health', (c) => c.text('ok'));
  let dropped = 0;
  const server = await listen(app, { port: 0, maxConnections: 2, onConnectionDropped: () => dropped++ });
  try {
    const slow = [fetch(`${server.url}/slow`), fetch(`${server.url}/slow`)];
    await settle();
    const extra = await opened(server.port);
    assert.equal(await closedUnanswered(extra), true);
    assert.equal(dropped, 1);
    release();
    for (const r of await Promise.all(slow)) assert.equal(await r.text(), 'done');
    assert.equal((await fetch(`${server.url}/health`)).status, 200);
  } finally {
    await server.close();
  }
});

test('--max-connections takes a whole number ≥ 1', async () => {
  for (const bad of ['0', 'x', '-1']) {
    const r = await runCli(['serve', '--model', file, '--max-connections', bad]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /--max-connections/);
  }
});
