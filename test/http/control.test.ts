/**
 * Control routes against the attacks that reached them: a web page's `text/plain` POST (no CORS
 * preflight), a foreign Origin, a DNS-rebound Host name, no or a wrong token; the rollout's reload
 * passing serve's error body (with the key echoed, also URL-encoded and in base64) into a message; an
 * unbounded set of announced steps. Real HTTP servers throughout.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WeightsGate } from '../../src/service/index.ts';
import { redactSecret } from '../../src/util/redact.ts';
import { toPolicyError } from '../../src/policy/openai/index.ts';

/** A raw request, so that Host and Origin are what an attacker's browser would send. */
function send(url: string, headers: Record<string, string>, body: string): Promise<{ status: number; text: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers: { ...headers, 'content-length': Buffer.byteLength(body) } },
      (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

test('POST /weights: text/plain, a foreign Origin or Host, no or a wrong token are refused and release nothing; the token releases', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'trace-control-'));
  const gate = new WeightsGate({ dir, port: 0, pollMs: 10, allowHosts: ['trainer.internal'] });
  await gate.start();
  try {
    assert.equal(gate.generatedToken, true);
    assert.ok(gate.token.length >= 24);
    const url = `${gate.url}/weights`;
    const port = new URL(gate.url!).port;
    const auth = { authorization: `Bearer ${gate.token}` };
    const json = { 'content-type': 'application/json' };
    const body = JSON.stringify({ step: 0 });
    const attacks: Array<[string, Record<string, string>, number, string]> = [
      ['a web page: text/plain, no preflight', { 'content-type': 'text/plain', origin: 'http://evil.example' }, 403, 'foreign_origin'],
      ['text/plain with the token', { ...auth, 'content-type': 'text/plain' }, 415, 'unsupported_media_type'],
      ['a form post with the token', { ...auth, 'content-type': 'application/x-www-form-urlencoded' }, 415, 'unsupported_media_type'],
      ['a foreign Origin with the token', { ...auth, ...json, origin: 'http://evil.example' }, 403, 'foreign_origin'],
      ['a rebound Host name', { ...auth, ...json, host: `evil.example:${port}` }, 403, 'foreign_host'],
      ['no token', { ...json }, 401, 'invalid_token'],
      ['a wrong token', { ...json, authorization: 'Bearer nope' }, 401, 'invalid_token'],
      ['the token in another scheme', { ...json, authorization: `Basic ${gate.token}` }, 401, 'invalid_token'],
    ];
    for (const [what, headers, status, code] of attacks) {
      const r = await send(url, headers, body);
      assert.equal(r.status, status, `${what}: ${r.text}`);
      assert.equal((JSON.parse(r.text) as { error: { code: string } }).error.code, code, what);
    }
    assert.deepEqual(await (await fetch(`${gate.url}/status`)).json(), { waiting: null, ready: [] }, 'nothing was announced');
    // The token, at a loopback Host, at the allowed name: accepted (for the steps the service waits for).
    gate.expect(0);
    assert.equal((await send(url, { ...auth, ...json }, body)).status, 200);
    await gate.wait(0);
    const waiting = gate.wait(1);
    assert.equal((await send(url, { ...auth, ...json, host: `trainer.internal:${port}` }, JSON.stringify({ step: 1 }))).status, 200);
    await waiting;
  } finally {
    await gate.close();
  }
});

test('POST /weights accepts only the step the service waits for: steps ahead are refused in one line, with the service waiting (issue 69)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'trace-control-'));
  const gate = new WeightsGate({ dir, port: 0, pollMs: 10, token: 'a-given-token-of-enough-length' });
  await gate.start();
  try {
    assert.equal(gate.generatedToken, false);
    const post = (step: number) =>
      send(`${gate.url}/weights`, { 'content-type': 'application/json', authorization: 'Bearer a-given-token-of-enough-length' }, JSON.stringify({ step }));
    const refused = async (step: number, why: RegExp) => {
      const r = await post(step);
      assert.equal(r.status, 409, r.text);
      const error = (JSON.parse(r.text) as { error: { code: string; message: string } }).error;
      assert.equal(error.code, 'step_not_awaited');
      assert.match(error.message, why);
      assert.doesNotMatch(error.message, /\n/, 'one line');
    };
    // While the first step rolls out: a holder of the token announcing steps ahead, as the attack did.
    for (const step of [0, 1, 2, 3, 1_000_000]) await refused(step, /^step \d+ is not awaited: the service is rolling out and waits for no weights yet;/);
    // Step 0's batch is written: only step 0 is accepted, and it releases the wait that follows.
    gate.expect(0);
    await refused(1, /the service will wait next for the weights of step 0;/);
    assert.equal((await post(0)).status, 200);
    await gate.wait(0);
    // Rolling out step 1 again accepts nothing; then the service waits for step 1.
    await refused(1, /waits for no weights yet/);
    let released = false;
    const waiting = gate.wait(1).then(() => (released = true));
    for (const step of [0, 2, 3]) await refused(step, /the service is waiting for the weights of step 1;/);
    await sleep(50);
    assert.equal(released, false, 'no refused announcement released the wait');
    assert.deepEqual(await (await fetch(`${gate.url}/status`)).json(), { waiting: 1, ready: [0] });
    assert.equal((await post(1)).status, 200);
    await waiting;
  } finally {
    await gate.close();
  }
});

test('a reload error reaching /weights: the control token and its transformed echoes are cut from the 502', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'trace-control-'));
  const token = 'gate-token/with+odd=chars&more';
  const gate = new WeightsGate({
    dir,
    port: 0,
    token,
    reload: async () => {
      const b64 = Buffer.from(`user:${token}`).toString('base64');
      throw new Error(`serve said: bad ${token} (${encodeURIComponent(token)}) Basic ${b64} ${Buffer.from(token).toString('hex')}`);
    },
  });
  await gate.start();
  try {
    gate.expect(0);
    const r = await send(
      `${gate.url}/weights`,
      { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      JSON.stringify({ step: 0, model: '/x.gguf' }),
    );
    assert.equal(r.status, 502);
    const message = (JSON.parse(r.text) as { error: { message: string } }).error.message;
    for (const form of [token, encodeURIComponent(token), Buffer.from(token).toString('hex'), Buffer.from(token).toString('base64').slice(0, 12)])
      assert.ok(!message.includes(form), `${form} in ${message}`);
    assert.match(message, /serve said: bad \[redacted\]/);
  } finally {
    await gate.close();
  }
});

test('redactSecret: the key raw, URL-encoded, JSON-escaped, hex, and base64 at any offset; other text untouched', () => {
  const key = 'sk-live"Ab/cd+EF==gh';
  const echoes = [
    key,
    encodeURIComponent(key),
    JSON.stringify(key).slice(1, -1),
    Buffer.from(key).toString('hex'),
    Buffer.from(key).toString('hex').toUpperCase(),
    ...[0, 1, 2].map((pad) => Buffer.from(`${'x'.repeat(pad)}${key}tail`).toString('base64')),
    ...[0, 1, 2].map((pad) => Buffer.from(`Bearer ${'y'.repeat(pad)}${key}`).toString('base64url')),
  ];
  for (const echo of echoes) {
    const out = redactSecret(`the server said: ${echo} end`, key);
    assert.ok(out.startsWith('the server said: ') && out.endsWith(' end'), out);
    assert.ok(!out.includes(echo), `${echo} survived: ${out}`);
    // No 12-character run of the key's base64 survives either.
    const b64 = Buffer.from(key).toString('base64');
    assert.ok(!out.includes(b64.slice(2, 14)), out);
  }
  assert.equal(redactSecret('nothing secret here', key), 'nothing secret here');
  assert.equal(redactSecret('x', undefined), 'x');
});

test('a policy failure message: an API key the server echoed URL-encoded or in base64 is cut like the raw one', () => {
  const key = 'sk-live/abc+def=0123456789';
  for (const echo of [key, encodeURIComponent(key), Buffer.from(`Authorization: Bearer ${key}`).toString('base64')]) {
    const e = toPolicyError(new SyntaxError(`Unexpected token in ${echo}`), 'http://server/v1', key) as Error;
    assert.match(e.message, /\[API key\]/, e.message);
    assert.ok(!e.message.includes(echo), e.message);
  }
});
