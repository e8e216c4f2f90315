/**
 * What a server sends is bounded: a body past the policy's ceiling (declared by Content-Length, or
 * streamed without end) fails the call as a parse_error, quickly and without reading it whole; a
 * long HTML error page is cut in the failure message.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { OpenAIPolicy } from '../../src/policy/index.ts';
import { PolicyCallError } from '../../src/policy/errors.ts';
import { createRng } from '../../src/util/rng.ts';

async function serve(handler: (res: ServerResponse) => void): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => handler(res));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

const ctx = { prompt: { id: 'q', question: 'Who?', answers: ['x'] }, rendered: 'Question: Who?', turns: [], rng: createRng(0), maxTokens: 16 };

async function failure(url: string): Promise<PolicyCallError> {
  const policy = new OpenAIPolicy({ baseURLs: [url], model: 'm', maxResponseBytes: 1024 * 1024 });
  const e = await policy.act(ctx).then(
    () => undefined,
    (x: unknown) => x,
  );
  assert.ok(e instanceof PolicyCallError, `a PolicyCallError, not ${String(e)}`);
  return e;
}

test('a body streamed without end is cut at the ceiling: parse_error, not retried, in well under the time to read it', async () => {
  let sent = 0;
  const chunk = Buffer.alloc(64 * 1024, 'a');
  const server = await serve((res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    const more = () => {
      // Stops once the client has gone (or after 1 GiB, so a broken bound cannot fill the disk or memory).
      while (!res.destroyed && sent < 1024 ** 3) {
        sent += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', more);
      }
      res.end();
    };
    more();
  });
  try {
    const t0 = performance.now();
    const e = await failure(server.url);
    assert.equal(e.code, 'parse_error');
    assert.equal(e.retryable, false);
    assert.match(e.message, /sent more than 1048576 bytes/);
    assert.ok(performance.now() - t0 < 10_000);
    assert.ok(sent < 64 * 1024 * 1024, `the server got to send only ${sent} bytes`);
  } finally {
    await server.close();
  }
});

test('a declared Content-Length past the ceiling is refused before the body is read', async () => {
  const server = await serve((res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(2 * 1024 * 1024) });
    res.write('{"choices": [');
  });
  try {
    const e = await failure(server.url);
    assert.equal(e.code, 'parse_error');
    assert.match(e.message, /\(2097152 declared\)/);
  } finally {
    await server.close();
  }
});

test('an HTML error page is cut in the failure message', async () => {
  const server = await serve((res) => void res.writeHead(502, { 'content-type': 'text/html' }).end(`<html>${'x'.repeat(5000)}</html>`));
  try {
    const e = await failure(server.url);
    assert.equal(e.code, 'server_error');
    assert.ok(e.message.length < 600, `${e.message.length} characters`);
    assert.match(e.message, /HTTP 502/);
  } finally {
    await server.close();
  }
});
