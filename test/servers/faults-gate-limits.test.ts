/**
 * The fault server and the weights gate share the server base: body limits, JSON 404, /health. The
 * fault server's --upstream takes a URL with or without /v1, and an unreachable upstream is a 502
 * JSON error with one stderr line from the real command.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { WeightsGate } from '../../src/service/index.ts';
import { startFaultServer, upstreamBase } from '../../src/faults/index.ts';
import { ServerStartError } from '../../src/http/index.ts';
import { postJson, postOversized, startServerCli } from '../helpers/server-cli.ts';

test('upstreamBase accepts the server with or without /v1', () => {
  assert.equal(upstreamBase('http://127.0.0.1:8000'), 'http://127.0.0.1:8000/v1');
  assert.equal(upstreamBase('http://127.0.0.1:8000/'), 'http://127.0.0.1:8000/v1');
  assert.equal(upstreamBase('http://127.0.0.1:8000/v1'), 'http://127.0.0.1:8000/v1');
  assert.equal(upstreamBase('http://127.0.0.1:8000/v1/'), 'http://127.0.0.1:8000/v1');
  assert.equal(upstreamBase('http://h/openai/v1'), 'http://h/openai/v1');
});

test('faults serve forwards to an upstream given as http://host:port (the README form) and as …/v1', async () => {
  const upstream = await startFaultServer({ rate: 0, script: () => 'from upstream' });
  try {
    const bare = upstream.url.replace(/\/v1$/, '');
    for (const form of [bare, upstream.url]) {
      const proxy = await startServerCli(['faults', 'serve', '--rate', '0', '--port', '0', '--upstream', form]);
      try {
        const r = await postJson(`${proxy.url}/v1/completions`, { prompt: 'Question: x', model: 'm' });
        assert.equal(r.status, 200, `${form}: ${JSON.stringify(r.json)}`);
        assert.equal(r.json.choices[0].text, 'from upstream');
      } finally {
        await proxy.stop();
      }
    }
  } finally {
    await upstream.close();
  }
});

test('an unreachable upstream is a 502 JSON error and one stderr line per failure', async () => {
  // A port that was free a moment ago: nothing listens there.
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const dead = (probe.address() as AddressInfo).port;
  probe.close();
  const proxy = await startServerCli(['faults', 'serve', '--rate', '0', '--port', '0', '--upstream', `http://127.0.0.1:${dead}`]);
  try {
    const r = await postJson(`${proxy.url}/v1/chat/completions`, { messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(r.status, 502);
    assert.equal(r.json.error.code, 'upstream_unreachable');
    assert.match(r.json.error.message, new RegExp(`^upstream http://127\\.0\\.0\\.1:${dead}/v1/chat/completions unreachable \\(ECONNREFUSED\\)`));
  } finally {
    await proxy.stop();
  }
  const lines = proxy.stderr().trim().split('\n');
  const failures = lines.filter((l) => l.includes('unreachable'));
  assert.equal(failures.length, 1, proxy.stderr());
  assert.ok(!/\n\s+at /.test(proxy.stderr()), 'no stack trace');
});

test('fault server: oversized body 413, unknown route 404 JSON, /health', async () => {
  const server = await startFaultServer({ rate: 0, maxBodyBytes: 1000 });
  try {
    const base = server.url.replace(/\/v1$/, '');
    const big = await postOversized(`${server.url}/completions`, JSON.stringify({ prompt: 'x'.repeat(5000) }));
    assert.ok('status' in big);
    assert.equal(big.status, 413);
    assert.equal(big.json.error.code, 'body_too_large');
    const nf = await fetch(`${base}/v2/x`);
    assert.equal(nf.status, 404);
    assert.equal(((await nf.json()) as { error: { code: string } }).error.code, 'not_found');
    assert.equal(((await (await fetch(`${base}/health`)).json()) as { status: string }).status, 'ok');
  } finally {
    await server.close();
  }
});

test('weights gate: a 1 MB announcement is a 413, a wrong route a JSON 404; a port in use is a ServerStartError', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gate-'));
  const gate = new WeightsGate({ dir, port: 0 });
  await gate.start();
  try {
    const big = await postOversized(`${gate.url}/weights`, JSON.stringify({ step: 1, pad: 'x'.repeat(1_000_000) }));
    if ('status' in big) {
      assert.equal(big.status, 413);
      assert.equal(big.json.error.code, 'body_too_large');
    }
    const nf = await fetch(`${gate.url}/nothing`);
    assert.equal(nf.status, 404);
    gate.expect(0);
    const ok = await postJson(`${gate.url}/weights`, { step: 0 }, { authorization: `Bearer ${gate.token}` });
    assert.deepEqual(ok.json, { ok: true, step: 0, reloaded: false });
    const port = Number(new URL(gate.url!).port);
    const second = new WeightsGate({ dir, port });
    await assert.rejects(second.start(), (e: Error) => e instanceof ServerStartError && /--port \d+: already in use/.test(e.message));
  } finally {
    await gate.close();
  }
});
