/**
 * The fork extension (src/env/remote/fork.ts) against `trace-rl env serve`'s own implementation on a
 * real port, over both protocols: a restore opens a session from the kept state with no environment
 * step (the server's own step count), continues exactly as a replayed one, and is checked against the
 * record; a fork the server refuses (its bounded store dropped the state for another client's) or
 * answers otherwise falls back to replay, counted; a server that does not offer fork is replayed; the
 * server's store stays within its count and age bounds whatever a client keeps, and it refuses a fork
 * it cannot honour (a key it never gave, one too long, a server started without fork) in the
 * protocol's own error shape.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { AgentGymServer } from '../../../src/env/remote/agentgym-session.ts';
import { parseAgentGymReply } from '../../../src/env/remote/agentgym-protocol.ts';
import type { ForkOffer } from '../../../src/env/remote/fork.ts';
import { OpenEnvServer } from '../../../src/env/remote/openenv-session.ts';
import { RemoteEnv, type RemoteState } from '../../../src/env/remote/remote-env.ts';
import { KeptStore } from '../../../src/env/remote/serve/kept-states.ts';
import { ServedEnv } from '../../../src/env/remote/serve/served-env.ts';
import { serveEnvironment, type Protocol } from '../../../src/env/remote/serve/servers.ts';
import { taskPrompt } from '../../../src/env/remote/tasks.ts';
import { worldKind } from '../../../src/env/world/kind.ts';
import type { Action, Prompt, Turn } from '../../../src/tree/types.ts';

const world = await worldKind.build(worldKind.schema.parse({ kind: 'world', seed: 5, questions: 40 }), { maxTurns: 6 });
const limits = { timeoutMs: 5_000, maxReplyBytes: 64 * 1024 };
const task = (i: number): Prompt =>
  taskPrompt({ id: `seed-${i}`, params: { seed: i, data_idx: i } }, { observation: world.env.render(world.train[i]!) }, 'wire');
const actions: Action[] = [
  { type: 'search', input: 'Ostlo' },
  { type: 'search', input: 'Anost Academy' },
  { type: 'search', input: 'Vel Harbor' },
];

async function served(protocol: Protocol, fork?: ForkOffer) {
  const env = new ServedEnv(world, 'world', { maxSessions: 16, ...(fork ? { fork } : {}) });
  const server = await serveEnvironment(env, protocol, { port: 0, maxBodyBytes: 1 << 20 });
  return { env, server };
}

async function client(protocol: Protocol, url: string) {
  const server = protocol === 'openenv' ? new OpenEnvServer({ ...limits, url, actionField: 'text' }) : new AgentGymServer({ ...limits, url });
  const fork = await server.forkOffer();
  return new RemoteEnv({
    server,
    maxTurns: 6,
    action: 'action',
    successThreshold: 0.3,
    sessions: 4,
    branching: 'replay',
    reconnectDelayMs: 20,
    ...(fork ? { fork } : {}),
  });
}

/** Plays `actions` from a reset; the recorded turns and the final state. */
async function play(env: RemoteEnv, prompt: Prompt, acts: readonly Action[]): Promise<{ turns: Turn[]; state: RemoteState }> {
  let state = await env.reset(prompt);
  const turns: Turn[] = [];
  for (const action of acts) {
    const o = await env.step(state, action);
    const turn: Turn = { thought: '', action, observation: o.observation };
    if (o.env) turn.env = o.env;
    turns.push(turn);
    state = o.state;
  }
  return { turns, state };
}

for (const protocol of ['openenv', 'agentgym'] as const) {
  test(`${protocol}: a restore forks the kept state: no environment step, the same continuation as a replay, checked against the record`, async () => {
    const { env: servedEnv, server } = await served(protocol, { maxKept: 64, ttlS: 600 });
    try {
      const env = await client(protocol, server.url);
      const { turns, state } = await play(env, task(0), actions);
      await env.release(state);
      const stepsBefore = servedEnv.steps;
      const restored = await env.restore(task(0), turns.slice(0, 2));
      assert.equal(servedEnv.steps, stepsBefore, 'the fork took no environment step');
      assert.deepEqual(env.restoreCost(restored)?.steps, 0);
      const next = await env.step(restored, actions[2]!);
      assert.equal(next.observation, turns[2]!.observation, 'the forked session continues as the original did');
      await env.release(next.state);
      const load = env.serverLoad();
      assert.equal(load.restoreMethod, 'fork');
      assert.deepEqual([load.forks, load.forkFallbacks], [1, 0]);
      assert.equal(servedEnv.openSessions, 0);
    } finally {
      await server.close();
    }
  });
}

test('a state the server dropped (its store is bounded: another client kept newer ones) is restored by replay, counted as a fallback', async () => {
  const { env: servedEnv, server } = await served('agentgym', { maxKept: 2, ttlS: 600 });
  try {
    const a = await client('agentgym', server.url);
    const b = await client('agentgym', server.url);
    const first = await play(a, task(1), actions.slice(0, 2));
    await a.release(first.state);
    const other = await play(b, task(2), actions.slice(0, 2));
    await b.release(other.state);
    assert.equal(servedEnv.keptStates, 2, 'the server keeps no more than its bound');
    const stepsBefore = servedEnv.steps;
    const restored = await a.restore(task(1), first.turns);
    assert.equal(servedEnv.steps - stepsBefore, 2, 'the prefix was replayed');
    assert.deepEqual(a.restoreCost(restored)?.steps, 2);
    await a.release(restored);
    const load = a.serverLoad();
    assert.deepEqual([load.forks, load.forkFallbacks], [0, 1]);
    // b's newer state is still kept and forks.
    const forked = await b.restore(task(2), other.turns);
    assert.deepEqual(b.restoreCost(forked)?.steps, 0);
    await b.release(forked);
  } finally {
    await server.close();
  }
});

test('a fork answered otherwise than the record is not used: the prefix is replayed and checked instead', async () => {
  const { env: servedEnv, server } = await served('openenv', { maxKept: 64, ttlS: 600 });
  // A wrong server: its forks answer another observation than the kept turn's.
  const fork = servedEnv.fork.bind(servedEnv);
  servedEnv.fork = (session, key) => ({ ...fork(session, key), observation: 'somewhere else' });
  try {
    const env = await client('openenv', server.url);
    const { turns, state } = await play(env, task(3), actions);
    await env.release(state);
    const restored = await env.restore(task(3), turns.slice(0, 2));
    assert.deepEqual(env.restoreCost(restored)?.steps, 2, 'replayed');
    const next = await env.step(restored, actions[2]!);
    assert.equal(next.observation, turns[2]!.observation);
    await env.release(next.state);
    assert.deepEqual(env.serverLoad().forkFallbacks, 1);
  } finally {
    await server.close();
  }
});

test('a run that never restores (a root-only strategy) asks the server to keep nothing', async () => {
  const { env: servedEnv, server } = await served('agentgym', { maxKept: 64, ttlS: 600 });
  try {
    const env = await client('agentgym', server.url);
    env.neverRestores();
    const { state } = await play(env, task(5), actions);
    await env.release(state);
    assert.equal(servedEnv.keptStates, 0);
  } finally {
    await server.close();
  }
});

test('a server that does not offer fork (GET /fork is not found) is replayed, and no step asks it to keep anything', async () => {
  const { env: servedEnv, server } = await served('openenv');
  const step = servedEnv.step.bind(servedEnv);
  let keeps = 0;
  servedEnv.step = (session, text, keep) => {
    if (keep) keeps++;
    return step(session, text, keep);
  };
  try {
    const env = await client('openenv', server.url);
    const { turns, state } = await play(env, task(4), actions);
    await env.release(state);
    const restored = await env.restore(task(4), turns.slice(0, 2));
    assert.deepEqual(env.restoreCost(restored)?.steps, 2);
    await env.release(restored);
    assert.equal(keeps, 0);
    assert.equal(env.serverLoad().restoreMethod, 'replay');
  } finally {
    await server.close();
  }
});

test("the server's kept states are bounded by count (oldest dropped first) and by age (an expired one is refused)", () => {
  let now = 0;
  const store = new KeptStore<string>(3, 1_000, () => now);
  const keys = ['a', 'b', 'c', 'd'].map((v) => store.keep(v));
  assert.equal(store.size, 3);
  assert.equal(store.get(keys[0]!), undefined, 'the oldest was dropped');
  assert.equal(store.get(keys[3]!), 'd');
  now = 1_000;
  assert.equal(store.get(keys[3]!), undefined, 'expired');
  store.keep('e');
  assert.equal(store.size, 1, 'keeping sweeps the expired ones');
  // A client asking for ever more keeps the store at its bound.
  for (let i = 0; i < 10_000; i++) store.keep(String(i));
  assert.equal(store.size, 3);
});

test('a kept key that is not short printable text is refused, naming the server', () => {
  assert.throws(
    () => parseAgentGymReply({ observation: 'o', reward: 0, done: false, kept: 'a b' }, 'agentgym server http://x', 'step'),
    /agentgym server http:\/\/x.*kept/,
  );
  assert.throws(() => parseAgentGymReply({ observation: 'o', reward: 0, done: false, kept: 'k'.repeat(201) }, 'agentgym server http://x', 'step'));
});

test('env serve refuses a fork it cannot honour, in each protocol’s error shape: a key it never gave, an oversized key, no fork offered', async () => {
  const { server } = await served('agentgym', { maxKept: 4, ttlS: 600 });
  const { server: plain } = await served('agentgym');
  const post = async (url: string, path: string, body: unknown) => {
    const r = await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: r.status, body: (await r.json()) as Record<string, unknown> };
  };
  try {
    const { body: created } = await post(server.url, '/create', {});
    const unknown = await post(server.url, '/fork', { id: created.id, key: 'never-given' });
    assert.match(String(unknown.body.error), /no kept state under that key/);
    const long = await post(server.url, '/fork', { id: created.id, key: 'k'.repeat(500) });
    assert.equal(long.status, 400);
    assert.equal((await fetch(`${plain.url}/fork`)).status, 404, 'no offer without --fork-keep');
    const { body: plainId } = await post(plain.url, '/create', {});
    assert.match(String((await post(plain.url, '/fork', { id: plainId.id, key: 'x' })).body.error), /does not fork/);
  } finally {
    await server.close();
    await plain.close();
  }
  const { server: ws } = await served('openenv', { maxKept: 4, ttlS: 600 });
  try {
    const socket = new WebSocket(`${ws.url.replace('http', 'ws')}/ws`);
    await new Promise((r) => socket.once('open', r));
    const answer = (message: object) =>
      new Promise<Record<string, unknown>>((resolve) => {
        socket.once('message', (d) => resolve(JSON.parse(String(d)) as Record<string, unknown>));
        socket.send(JSON.stringify(message));
      });
    const unknown = await answer({ type: 'fork', data: { key: 'never-given' } });
    assert.equal(unknown.type, 'error');
    assert.match(String((unknown.data as { message: string }).message), /no kept state under that key/);
    const long = await answer({ type: 'fork', data: { key: 'k'.repeat(500) } });
    assert.deepEqual([long.type, (long.data as { code: string }).code], ['error', 'VALIDATION_ERROR']);
    socket.close();
  } finally {
    await ws.close();
  }
});
