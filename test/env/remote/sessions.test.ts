/**
 * Sessions are a bounded resource and every answer is hostile input. Against the world served over
 * OpenEnv on a real port (and, for answers no honest server sends, a bare WebSocket server written here
 * to send them): the cap on open sessions holds, a full server is waited for, every session is closed
 * (released, cancelled, failed), a dropped connection is reconnected and the episode continues, a
 * server that stays gone fails the step naming itself and the task, and oversized, malformed or missing
 * answers fail with a message naming what was wrong.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { OpenEnvServer } from '../../../src/env/remote/openenv-session.ts';
import { RemoteEnv } from '../../../src/env/remote/remote-env.ts';
import { taskPrompt } from '../../../src/env/remote/tasks.ts';
import { worldKind } from '../../../src/env/world/kind.ts';
import type { Prompt } from '../../../src/tree/types.ts';
import { serveOpenEnv, servedWorld } from './served-world.ts';

const world = await worldKind.build(worldKind.schema.parse({ kind: 'world', seed: 5, questions: 40 }), { maxTurns: 4 });
const limits = { timeoutMs: 2_000, maxReplyBytes: 64 * 1024 };

function envOn(url: string, sessions: number, options: { reconnectDelayMs?: number; reconnectAttempts?: number; timeoutMs?: number } = {}) {
  const { timeoutMs = limits.timeoutMs, ...reconnect } = options;
  const server = new OpenEnvServer({ ...limits, timeoutMs, url, actionField: 'text' });
  return new RemoteEnv({ server, maxTurns: 4, action: 'action', successThreshold: 0.3, sessions, branching: 'replay', reconnectDelayMs: 20, ...reconnect });
}

/** Task i's prompt as the kind builds it (its first observation is the world's render). */
const task = (i: number): Prompt => taskPrompt({ id: `seed-${i}`, params: { seed: i } }, { observation: world.env.render(world.train[i]!) }, 'openenv');
const search = { type: 'search', input: 'Ostlo' };

test('at most env.sessions are open at once; every one is closed when its trajectory is released', async () => {
  const { served, peak } = servedWorld(world, 8);
  const server = await serveOpenEnv(served);
  try {
    const env = envOn(server.url, 2);
    await Promise.all(
      Array.from({ length: 6 }, async (_, i) => {
        const s = await env.reset(task(i));
        const o = await env.step(s, search);
        await env.release(o.state);
      }),
    );
    assert.equal(peak(), 2, 'never more than 2 sessions at once (and the cap was reached)');
    assert.equal(env.openSessions, 0);
    assert.equal(served.openSessions, 0, 'the server closed every session');
  } finally {
    await server.close();
  }
});

test('a server with fewer sessions than the client allows refuses the extra one (CAPACITY_REACHED); the client waits and gets it', async () => {
  const { served, peak } = servedWorld(world, 1);
  const server = await serveOpenEnv(served);
  try {
    const env = envOn(server.url, 3, { reconnectAttempts: 8 });
    const episodes = await Promise.all(
      Array.from({ length: 3 }, async (_, i) => {
        const s = await env.reset(task(i));
        const o = await env.step(s, search);
        await env.release(o.state);
        return o.observation;
      }),
    );
    assert.ok(episodes.every((o) => o.includes('<information>')));
    assert.equal(peak(), 1);
    assert.equal(served.openSessions, 0);
  } finally {
    await server.close();
  }
});

test('cancelled while restoring: the replay stops and its session is closed', async () => {
  const { served } = servedWorld(world, 8);
  const server = await serveOpenEnv(served);
  try {
    const env = envOn(server.url, 2);
    const s = await env.reset(task(0));
    const o1 = await env.step(s, search);
    const o2 = await env.step(o1.state, { type: 'search', input: 'Anost Academy' });
    await env.release(o2.state);
    const turns = [
      { thought: '', action: search, observation: o1.observation },
      { thought: '', action: { type: 'search', input: 'Anost Academy' }, observation: o2.observation },
    ];
    // Ctrl-C arrives while the server answers the replay's first step.
    const stop = new AbortController();
    const step = served.step.bind(served);
    let replayed = 0;
    served.step = (session, text) => {
      replayed++;
      stop.abort(new Error('Ctrl-C'));
      return step(session, text);
    };
    await assert.rejects(async () => env.restore(task(0), turns, { signal: stop.signal }), /Ctrl-C/);
    assert.equal(replayed, 1, 'the replay stopped after the step in flight');
    assert.equal(env.openSessions, 0);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(served.openSessions, 0);
  } finally {
    await server.close();
  }
});

test('a dropped connection is reopened, the episode replayed and checked, and the step goes on; a server that stays gone fails the step naming itself and the task', async () => {
  const { served } = servedWorld(world, 8);
  let server = await serveOpenEnv(served);
  const port = server.port;
  // The waits double from 20 ms: five reconnects give up after 20 + 40 + 80 + 160 + 320 ms.
  const env = envOn(server.url, 2, { reconnectAttempts: 5 });
  const s = await env.reset(task(1));
  const o1 = await env.step(s, search);
  // The server restarts between two turns: every socket is dropped.
  await server.close();
  server = await serveOpenEnv(served, port);
  const o2 = await env.step(o1.state, { type: 'answer', input: 'Ostlo' });
  assert.equal(o2.done, true, 'the episode went on in a new session');
  // What the uninterrupted episode gives, for comparison.
  const fresh = await env.reset(task(1));
  const f1 = await env.step(fresh, search);
  const f2 = await env.step(f1.state, { type: 'answer', input: 'Ostlo' });
  assert.deepEqual([o2.reward, o2.score], [f2.reward, f2.score]);
  await env.release(f2.state);
  await env.release(o2.state);

  const t = await env.reset(task(2));
  await server.close();
  await assert.rejects(
    async () => env.step(t, search),
    (e: Error) => e.message.includes(`openenv server http://127.0.0.1:${port}`) && e.message.includes('task "seed-2"'),
  );
  await env.release(t);
  assert.equal(env.openSessions, 0);
});

/** A WebSocket server that answers every message with `answer(message)` (undefined: silence). */
async function hostile(answer: (message: string) => string | undefined) {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise((r) => wss.once('listening', r));
  wss.on('connection', (ws) =>
    ws.on('message', (m) => {
      const a = answer(m.toString());
      if (a !== undefined) ws.send(a);
    }),
  );
  after(() => wss.close());
  return `http://127.0.0.1:${(wss.address() as AddressInfo).port}`;
}

const prompt = task(0);
const observation = (text: string, extra: object = {}) =>
  JSON.stringify({ type: 'observation', data: { observation: { text }, reward: null, done: false, ...extra } });

test('hostile answers: too large, the wrong shape, none at all; each fails naming what was wrong, and no session stays open', async () => {
  const cases: Array<[string, (m: string) => string | undefined, RegExp]> = [
    [
      'a frame over maxReplyBytes',
      (m) => (m.includes('reset') ? observation(world.env.render(world.train[0]!)) : observation('x'.repeat(100_000))),
      /sent a frame larger than 65536 bytes \(env.maxReplyBytes\); refused/,
    ],
    [
      'an observation that is not an object',
      (m) => (m.includes('reset') ? observation(world.env.render(world.train[0]!)) : '{"type":"observation","data":{"observation":"text"}}'),
      /data\.observation/,
    ],
    [
      'a reward that is not a number',
      (m) => (m.includes('reset') ? observation(world.env.render(world.train[0]!)) : observation('ok', { reward: 'high' })),
      /reward must be a finite number/,
    ],
    [
      'candidates of the wrong shape',
      (m) => (m.includes('reset') ? observation(world.env.render(world.train[0]!)) : observation('ok', { metadata: { candidates: 7 } })),
      /candidates must be/,
    ],
    ['silence', (m) => (m.includes('reset') ? observation(world.env.render(world.train[0]!)) : undefined), /no answer within 1000 ms/],
  ];
  // Each case has its own server and client, so they run at once (the silent one waits out its 1 s limit).
  await Promise.all(
    cases.map(async ([what, answer, message]) => {
      const env = envOn(await hostile(answer), 1, { reconnectAttempts: 1, timeoutMs: 1000 });
      const s = await env.reset(prompt);
      await assert.rejects(async () => env.step(s, search), message, what);
      await env.release(s);
      assert.equal(env.openSessions, 0, what);
    }),
  );
});
