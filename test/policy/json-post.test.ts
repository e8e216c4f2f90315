/**
 * The policy's HTTP client (json-post.ts, undici's Pool.dispatch with a handler of its own) against a
 * real node:http server: the call's signal is its only abort, watched by one listener of the client's
 * own. An abort must still end the request wherever it is — waiting for the head, or half-way through
 * the body — and leave no listener on the signal.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { JsonPost } from '../../src/policy/openai/json-post.ts';

async function withServer(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  fn: (url: string, closed: () => number) => Promise<void>,
  keepAliveTimeoutMs?: number,
) {
  let closedSockets = 0;
  const server = createServer(handler);
  if (keepAliveTimeoutMs !== undefined) server.keepAliveTimeout = keepAliveTimeoutMs;
  server.on('connection', (s) => s.on('close', () => closedSockets++));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    await fn(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, () => closedSockets);
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
}

const client = (url: string) => new JsonPost(url, { apiKey: 'k', maxResponseBytes: 1 << 20 });
const isAbort = (reason: unknown) => (e: unknown) => e instanceof Error && e.name === 'AbortError' && e.cause === reason;
const until = async (f: () => boolean) => {
  for (let i = 0; i < 200 && !f(); i++) await new Promise((r) => setTimeout(r, 10));
  return f();
};

test('calls on one signal share one listener on it, however many are made; answered calls stop watching it', async () => {
  await withServer(
    (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":1}'),
    async (url) => {
      const ctl = new AbortController();
      const c = client(url);
      for (let i = 0; i < 20; i++) assert.deepEqual(await c.post('completions', { a: i }, ctl.signal), { ok: 1 });
      await Promise.all(Array.from({ length: 8 }, (_, i) => c.post('completions', { b: i }, ctl.signal)));
      assert.equal(getEventListeners(ctl.signal, 'abort').length, 1, 'one listener for all the calls on this signal');
    },
  );
});

test('an abort while the server has not answered ends the call with AbortError and closes the socket', async () => {
  let seen = 0;
  await withServer(
    () => void seen++, // never answers
    async (url, closed) => {
      const ctl = new AbortController();
      const call = client(url).post('completions', { a: 1 }, ctl.signal);
      assert.ok(await until(() => seen === 1), 'the server got the request');
      const reason = new Error('timed out');
      ctl.abort(reason);
      await assert.rejects(call, isAbort(reason));
      assert.ok(await until(() => closed() === 1), 'the socket was closed, not left to the server');
      assert.equal(getEventListeners(ctl.signal, 'abort').length, 0);
    },
  );
});

test('an abort half-way through the body ends the call with AbortError', async () => {
  let started = false;
  await withServer(
    (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"choices": [');
      started = true; // and never finishes
    },
    async (url, closed) => {
      const ctl = new AbortController();
      const call = client(url).post('completions', {}, ctl.signal);
      assert.ok(await until(() => started));
      await new Promise((r) => setTimeout(r, 50));
      const reason = new Error('cancelled');
      ctl.abort(reason);
      await assert.rejects(call, isAbort(reason));
      assert.ok(await until(() => closed() === 1));
    },
  );
});

test('a call whose signal is already aborted sends nothing', async () => {
  let seen = 0;
  await withServer(
    (_req, res) => (seen++, res.end('{}')),
    async (url) => {
      const reason = new Error('before');
      await assert.rejects(client(url).post('completions', {}, AbortSignal.abort(reason)), isAbort(reason));
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(seen, 0);
    },
  );
});

test('a kept-alive connection the server closed while idle is not reused: the next call succeeds on a new one', async () => {
  let served = 0;
  await withServer(
    (_req, res) => (served++, res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":1}')),
    async (url, closed) => {
      const c = client(url);
      assert.deepEqual(await c.post('completions', {}), { ok: 1 });
      // The server drops idle connections after 50 ms (below), as uvicorn does after its keep-alive timeout.
      assert.ok(await until(() => closed() === 1), 'the server closed the idle connection');
      assert.deepEqual(await c.post('completions', {}), { ok: 1 });
      assert.equal(served, 2);
    },
    50,
  );
});
