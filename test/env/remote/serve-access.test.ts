/**
 * `trace-rl env serve` is a server only its user reaches, and no run leaks its sessions (issue 67 item
 * 6), against the real server code on real ports:
 *  - a WebSocket from another Origin, a foreign Host (DNS rebinding), a text/plain POST (no preflight)
 *    are refused; with a token, a request without it is refused and a run with env.tokenFile trains;
 *    the fork extension's routes (GET /fork, POST /fork) pass the same checks;
 *  - a `train` killed with kill -9 mid-step leaves its AgentGym sessions open; the server reaps them
 *    after --session-timeout, the resumed run waits out the full server meanwhile, and the server's
 *    open sessions return to 0.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { ServedEnv } from '../../../src/env/remote/serve/served-env.ts';
import { serveEnvironment } from '../../../src/env/remote/serve/servers.ts';
import { agentGymKind } from '../../../src/env/remote/kind.ts';
import { worldKind } from '../../../src/env/world/kind.ts';
import { BIN, outputOf, runCli } from '../../helpers/run-cli.ts';

const root = mkdtempSync(join(tmpdir(), 'trace-serve-access-'));
after(() => rmSync(root, { recursive: true, force: true }));
const world = await worldKind.build(worldKind.schema.parse({ kind: 'world', seed: 5, questions: 40 }), { maxTurns: 4 });
const TOKEN = 'a-token-of-at-least-16-characters';

/** A raw HTTP request (fetch cannot set Host or Origin), answered with its status and body. */
function raw(url: string, options: { method?: string; path: string; headers?: Record<string, string>; body?: string }) {
  const u = new URL(url);
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, method: options.method ?? 'GET', path: options.path, headers: options.headers ?? {} }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** The status a WebSocket upgrade to /ws gets (101 when it opens). */
function upgrade(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/ws`, { headers });
    ws.on('open', () => (ws.terminate(), resolve(101)));
    ws.on('unexpected-response', (_req, res) => (resolve(res.statusCode!), ws.terminate()));
    ws.on('error', () => resolve(0));
  });
}

test('env serve refuses a foreign Origin (WebSocket and HTTP), a foreign Host and a text/plain POST; with a token, requests without it', async () => {
  const open = await serveEnvironment(new ServedEnv(world, 'world', { maxSessions: 4 }), 'openenv', { port: 0, maxBodyBytes: 1 << 20 });
  const gym = await serveEnvironment(new ServedEnv(world, 'world', { maxSessions: 4 }), 'agentgym', {
    port: 0,
    maxBodyBytes: 1 << 20,
    access: { token: TOKEN },
  });
  after(() => Promise.all([open.close(), gym.close()]));
  const bearer = { authorization: `Bearer ${TOKEN}` };
  assert.equal(await upgrade(open.url, {}), 101, 'a local client opens a session');
  assert.equal(await upgrade(open.url, { origin: 'http://evil.example' }), 403, 'cross-site WebSocket hijacking');
  assert.equal(await upgrade(open.url, { host: 'evil.example:8000' }), 403, 'a DNS-rebound name');
  const page = await raw(open.url, { path: '/schema', headers: { origin: 'http://evil.example' } });
  assert.equal(page.status, 403);
  assert.match(page.body, /Origin http:\/\/evil\.example\) may not use this environment server/);
  const json = { 'content-type': 'application/json', ...bearer };
  assert.equal((await raw(gym.url, { method: 'POST', path: '/create', headers: json, body: '{}' })).status, 200, 'a local client with the token');
  const form = await raw(gym.url, { method: 'POST', path: '/create', headers: { 'content-type': 'text/plain', ...bearer }, body: '{}' });
  assert.equal(form.status, 415, 'a POST a page sends without a preflight');
  assert.equal((await raw(gym.url, { method: 'POST', path: '/create', headers: { ...json, host: 'evil.example' }, body: '{}' })).status, 403);
  const anonymous = await raw(gym.url, { method: 'POST', path: '/create', headers: { 'content-type': 'application/json' }, body: '{}' });
  assert.equal(anonymous.status, 401);
  assert.match(anonymous.body, /needs its token as Authorization: Bearer/);
  // The client sends the token from env.tokenFile.
  const tokenFile = join(root, 'token');
  writeFileSync(tokenFile, `${TOKEN}\n`);
  const setup = await agentGymKind.build(agentGymKind.schema.parse({ kind: 'agentgym', url: gym.url, tasks: [0, 1], tokenFile }), { maxTurns: 4 });
  assert.equal(setup.train.length, 2);
});

test('the fork extension’s routes pass the same checks: GET /fork and POST /fork (AgentGym), GET /fork (OpenEnv)', async () => {
  const fork = { maxKept: 8, ttlS: 60 };
  const open = await serveEnvironment(new ServedEnv(world, 'world', { maxSessions: 4, fork }), 'openenv', { port: 0, maxBodyBytes: 1 << 20 });
  const gym = await serveEnvironment(new ServedEnv(world, 'world', { maxSessions: 4, fork }), 'agentgym', {
    port: 0,
    maxBodyBytes: 1 << 20,
    access: { token: TOKEN },
  });
  after(() => Promise.all([open.close(), gym.close()]));
  const bearer = { authorization: `Bearer ${TOKEN}` };
  assert.equal((await raw(open.url, { path: '/fork' })).status, 200, 'a local client reads the offer');
  assert.equal((await raw(open.url, { path: '/fork', headers: { origin: 'http://evil.example' } })).status, 403);
  assert.equal((await raw(open.url, { path: '/fork', headers: { host: 'evil.example' } })).status, 403);
  assert.equal((await raw(gym.url, { path: '/fork' })).status, 401, 'no token');
  assert.equal((await raw(gym.url, { path: '/fork', headers: bearer })).status, 200);
  const json = { 'content-type': 'application/json', ...bearer };
  const body = JSON.stringify({ id: 1, key: 'k' });
  assert.equal((await raw(gym.url, { method: 'POST', path: '/fork', headers: { 'content-type': 'application/json' }, body })).status, 401);
  assert.equal((await raw(gym.url, { method: 'POST', path: '/fork', headers: { ...json, origin: 'http://evil.example' }, body })).status, 403);
  assert.equal((await raw(gym.url, { method: 'POST', path: '/fork', headers: { ...json, 'content-type': 'text/plain' }, body })).status, 415);
  assert.equal((await raw(gym.url, { method: 'POST', path: '/fork', headers: json, body })).status, 200, 'past the checks: the route answers');
});

test('kill -9 mid-step leaves sessions open; the server reaps them, the resumed run waits out the full server, and open sessions return to 0', async () => {
  const served = new ServedEnv(world, 'world', { maxSessions: 4, idleTimeoutMs: 1_000 });
  const server = await serveEnvironment(served, 'agentgym', { port: 0, maxBodyBytes: 1 << 20 });
  after(() => server.close());
  const config = join(root, 'kill.json');
  writeFileSync(
    config,
    JSON.stringify({
      seed: 2,
      steps: 2,
      pool: 4,
      engine: { maxTurns: 4 },
      strategy: { name: 'grpo', budget: 8 },
      policy: { kind: 'embedded', warmStart: 'none' },
      predictor: { useGold: false },
      env: {
        kind: 'agentgym',
        url: server.url,
        tasks: { from: 0, to: 8 },
        questionAfter: 'Question: ',
        successThreshold: 0.3,
        action: { text: 'action' },
        sessions: 4,
      },
    }),
  );
  const out = join(root, 'killed');
  const child = spawn(process.execPath, [BIN, 'train', '--config', config, '--out', out, '--quiet'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = outputOf(child);
  // Killed from inside the server while it answers a step of the first training step: mid-step by construction.
  const step = served.step.bind(served);
  let leaked = 0;
  served.step = async (session, text) => {
    if (served.counts.steps === 6 && leaked === 0) {
      leaked = served.openSessions;
      child.kill('SIGKILL');
    }
    return step(session, text);
  };
  const killed = await exited;
  assert.equal(killed.code, null, `killed by the signal: ${killed.stderr}`);
  assert.ok(leaked > 0 && served.openSessions > 0, `sessions left open by the killed run (${served.openSessions})`);
  served.step = step;
  const resumed = await runCli(['train', '--resume', out, '--quiet']);
  assert.equal(resumed.code, 0, resumed.stderr);
  for (let i = 0; i < 100 && served.openSessions > 0; i++) await new Promise((r) => setTimeout(r, 100));
  assert.equal(served.openSessions, 0, 'every session closed: the run’s own, and the killed run’s reaped');
  assert.ok(served.counts.reaped >= leaked, `the server reaped the killed run's ${leaked} sessions (${served.counts.reaped})`);
});
