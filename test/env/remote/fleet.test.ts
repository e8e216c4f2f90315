/**
 * A fleet (env.url naming several servers of one environment) against real `env serve` servers on real
 * ports: sessions go to the least-loaded server within each one's cap, and a trajectory's steps stay
 * on its server; a server that stops answering mid-episode has its trajectory continue on another by
 * a checked replay (counted as a failover), and it is used again once it is back; each server's
 * sessions, steps and failures are reported; a state kept on a server that went down is restored by
 * replay on another; a full server is passed over for one with room (all full: waited out); a hang
 * fails its step once, with no failover (env-robust's rule).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Fleet, ServerDown } from '../../../src/env/remote/fleet.ts';
import { openEnvKind } from '../../../src/env/remote/kind.ts';
import { OpenEnvServer } from '../../../src/env/remote/openenv-session.ts';
import { RemoteEnv } from '../../../src/env/remote/remote-env.ts';
import { ServerTimedOut } from '../../../src/env/remote/session.ts';
import { ServedEnv } from '../../../src/env/remote/serve/served-env.ts';
import { taskPrompt } from '../../../src/env/remote/tasks.ts';
import { worldKind } from '../../../src/env/world/kind.ts';
import type { Prompt } from '../../../src/tree/types.ts';
import { serveOpenEnv, servedWorld } from './served-world.ts';

const world = await worldKind.build(worldKind.schema.parse({ kind: 'world', seed: 5, questions: 40 }), { maxTurns: 4 });
const limits = { timeoutMs: 2_000, maxReplyBytes: 64 * 1024 };
const task = (i: number): Prompt => taskPrompt({ id: `seed-${i}`, params: { seed: i } }, { observation: world.env.render(world.train[i]!) }, 'openenv');
const search = { type: 'search', input: 'Ostlo' };
const answer = { type: 'answer', input: 'Ostlo' };

function fleetEnv(urls: string[], sessions: number) {
  const servers = urls.map((url) => new OpenEnvServer({ ...limits, url, actionField: 'text' }));
  return new RemoteEnv({ server: servers, maxTurns: 4, action: 'action', successThreshold: 0.3, sessions, branching: 'replay', reconnectDelayMs: 20 });
}

test('sessions go to the least-loaded server within each one’s cap, and a trajectory’s steps stay on its server', async () => {
  const a = servedWorld(world, 16);
  const b = servedWorld(world, 16);
  const servers = [await serveOpenEnv(a.served), await serveOpenEnv(b.served)];
  try {
    const env = fleetEnv(
      servers.map((s) => s.url),
      2,
    );
    await Promise.all(
      Array.from({ length: 8 }, async (_, i) => {
        const s = await env.reset(task(i));
        const o = await env.step(s, search);
        const o2 = await env.step(o.state, answer);
        await env.release(o2.state);
      }),
    );
    assert.deepEqual([a.peak(), b.peak()], [2, 2], 'both servers filled to their cap of 2, never past it');
    const load = env.serverLoad();
    assert.deepEqual(
      load.servers.map((s) => s.steps),
      [a.served.steps, b.served.steps],
      'each server got exactly the steps counted for it',
    );
    assert.equal(load.servers[0]!.sessions + load.servers[1]!.sessions, 8);
    assert.equal(a.served.steps + b.served.steps, 16, 'two steps per trajectory, none repeated: every trajectory stayed on its server');
    assert.equal(load.failovers, 0);
    assert.equal(env.openSessions, 0);
  } finally {
    await Promise.all(servers.map((s) => s.close()));
  }
});

test('a server that stops answering mid-episode: the trajectory continues on another by a checked replay (a failover), and the server is used again once back', async () => {
  const a = servedWorld(world, 16);
  const b = servedWorld(world, 16);
  let serverA = await serveOpenEnv(a.served);
  const serverB = await serveOpenEnv(b.served);
  try {
    const env = fleetEnv([serverA.url, serverB.url], 2);
    const s = await env.reset(task(1)); // the least-loaded is the first: server A
    const o1 = await env.step(s, search);
    assert.equal(a.served.steps, 1);
    await serverA.close(); // A goes away mid-episode
    const o2 = await env.step(o1.state, answer);
    assert.equal(o2.done, true, 'the episode went on');
    assert.equal(b.served.steps, 2, 'on server B: the recorded turn replayed, then the new one');
    // What the uninterrupted episode gives.
    const fresh = await env.reset(task(1));
    const f1 = await env.step(fresh, search);
    const f2 = await env.step(f1.state, answer);
    assert.deepEqual([o2.observation, o2.reward, o2.score], [f2.observation, f2.reward, f2.score]);
    await env.release(f2.state);
    await env.release(o2.state);
    const load = env.serverLoad();
    assert.equal(load.failovers, 1);
    assert.ok(load.servers[0]!.failures >= 1, 'server A’s failure is counted');
    // A comes back on its port; once its time out is over, it takes sessions again.
    serverA = await serveOpenEnv(a.served, serverA.port);
    await new Promise((r) => setTimeout(r, 250));
    const states = await Promise.all([env.reset(task(2)), env.reset(task(3))]);
    assert.deepEqual(
      env.serverLoad().servers.map((x) => x.sessions),
      [1, 1],
      'the two new sessions went one to each server',
    );
    await Promise.all(states.map((st) => env.release(st)));
  } finally {
    await Promise.all([serverA.close(), serverB.close()]);
  }
});

test('a prefix kept on a server that went down is restored by replay on another, counted as a fork fallback', async () => {
  const fork = { maxKept: 64, ttlS: 600 };
  const a = new ServedEnv(world, 'world', { maxSessions: 16, fork });
  const b = new ServedEnv(world, 'world', { maxSessions: 16, fork });
  const serverA = await serveOpenEnv(a);
  const serverB = await serveOpenEnv(b);
  try {
    const servers = [serverA.url, serverB.url].map((url) => new OpenEnvServer({ ...limits, url, actionField: 'text' }));
    const offers = await Promise.all(servers.map((s) => s.forkOffer()));
    const env = new RemoteEnv({
      server: servers,
      fork: offers,
      maxTurns: 4,
      action: 'action',
      successThreshold: 0.3,
      sessions: 2,
      branching: 'replay',
      reconnectDelayMs: 20,
    });
    const s0 = await env.reset(task(1)); // on server A, which keeps each turn's state
    const o1 = await env.step(s0, search);
    const o2 = await env.step(o1.state, { type: 'search', input: 'Anost Academy' });
    await env.release(o2.state);
    assert.ok(a.keptStates >= 2 && b.steps === 0);
    await serverA.close();
    const turns = [
      { thought: '', action: search, observation: o1.observation },
      { thought: '', action: { type: 'search', input: 'Anost Academy' }, observation: o2.observation },
    ];
    const restored = await env.restore(task(1), turns);
    assert.deepEqual(env.restoreCost(restored)?.steps, 2, 'replayed');
    assert.equal(b.steps, 2, 'on server B');
    await env.release(restored);
    const load = env.serverLoad();
    assert.deepEqual([load.forks, load.forkFallbacks], [0, 1]);
  } finally {
    await Promise.all([serverA.close(), serverB.close()]);
  }
});

test('the fleet’s placement: least-loaded first, waits in order when every server is full, skips a down server, and fails a wait for a down server alone', async () => {
  let now = 0;
  const fleet = new Fleet(['a', 'b'], 1, 100, () => now);
  assert.equal(await fleet.acquire(), 0);
  assert.equal(await fleet.acquire(), 1);
  const waiting = fleet.acquire();
  fleet.release(1);
  assert.equal(await waiting, 1, 'the freed server goes to the first waiter');
  fleet.release(0);
  fleet.markDown(0);
  const onlyA = fleet.acquire(undefined, 0);
  await assert.rejects(onlyA, ServerDown);
  fleet.release(1);
  assert.equal(await fleet.acquire(), 1, 'a down server takes no session');
  now = 200;
  assert.equal(await fleet.acquire(), 0, 'back after its time out');
});

test('env.url takes one address or a list of up to 64 distinct ones', () => {
  const parse = (url: unknown) => openEnvKind.schema.safeParse({ kind: 'openenv', url, tasks: [0] });
  assert.deepEqual((parse('http://a:1').data as { url: string[] } | undefined)?.url, ['http://a:1']);
  assert.deepEqual((parse(['http://a:1', 'http://b:2']).data as { url: string[] } | undefined)?.url, ['http://a:1', 'http://b:2']);
  assert.match(parse(['http://a:1', 'http://a:1']).error?.message ?? '', /each server once/);
  assert.equal(parse([]).success, false);
  assert.equal(parse(Array.from({ length: 65 }, (_, i) => `http://h${i}:1`)).success, false);
  assert.equal(parse(['ftp://a']).success, false);
});

test('a full server is passed over for one with room; when every server is full, the session waits for one to free', async () => {
  // A server whose own cap (1) is below the run's env.sessions (4): its refusal moves the session, no wait.
  const small = new ServedEnv(world, 'world', { maxSessions: 1 });
  const big = new ServedEnv(world, 'world', { maxSessions: 16 });
  const servers = [await serveOpenEnv(small), await serveOpenEnv(big)];
  try {
    const env = fleetEnv(
      servers.map((s) => s.url),
      4,
    );
    const t0 = performance.now();
    const states = await Promise.all(Array.from({ length: 4 }, (_, i) => env.reset(task(i))));
    assert.ok(performance.now() - t0 < 1_500, `no wait for the full server (${Math.round(performance.now() - t0)} ms)`);
    assert.deepEqual([small.openSessions, big.openSessions], [1, 3], 'the full server holds its one session, the other the rest');
    await Promise.all(states.map((s) => env.release(s)));
    assert.equal(env.openSessions, 0);
  } finally {
    await Promise.all(servers.map((s) => s.close()));
  }
  // Both full: the session waits (CapacityWait) until one frees a session, then opens there.
  const a = new ServedEnv(world, 'world', { maxSessions: 1 });
  const b = new ServedEnv(world, 'world', { maxSessions: 1 });
  const both = [await serveOpenEnv(a), await serveOpenEnv(b)];
  try {
    const env = fleetEnv(
      both.map((s) => s.url),
      4,
    );
    const held = [await env.reset(task(0)), await env.reset(task(1))];
    let opened = false;
    const third = env.reset(task(2)).then((s) => ((opened = true), s));
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(opened, false, 'every server is full: the session waits');
    await env.release(held[0]!);
    const s = await third;
    assert.equal(a.openSessions + b.openSessions, 2);
    await Promise.all([env.release(held[1]!), env.release(s)]);
  } finally {
    await Promise.all(both.map((s) => s.close()));
  }
});

test('a hang in a fleet fails its step once (ServerTimedOut): no reconnect, no failover to another server', async () => {
  // Server A's steps take longer than the client's timeout; server B answers at once.
  const slow = new ServedEnv(world, 'world', { maxSessions: 16, stepDelayMs: 1_500 });
  const fast = new ServedEnv(world, 'world', { maxSessions: 16 });
  const servers = [await serveOpenEnv(slow), await serveOpenEnv(fast)];
  try {
    const env = new RemoteEnv({
      server: servers.map((s) => new OpenEnvServer({ timeoutMs: 300, maxReplyBytes: 64 * 1024, url: s.url, actionField: 'text' })),
      maxTurns: 4,
      action: 'action',
      successThreshold: 0.3,
      sessions: 2,
      branching: 'replay',
      reconnectDelayMs: 20,
    });
    const s = await env.reset(task(0));
    assert.equal(slow.openSessions, 1, 'the first session is on server A');
    const t0 = performance.now();
    await assert.rejects(env.step(s, search), (e: Error) => e instanceof ServerTimedOut && /task "seed-0", turn 1/.test(e.message));
    assert.ok(performance.now() - t0 < 1_200, 'within about one timeout');
    assert.equal(fast.counts.steps + fast.counts.resets, 0, 'nothing was sent to server B');
    const load = env.serverLoad();
    assert.equal(load.failovers, 0);
    assert.equal(load.steps, 1, 'the step was sent once');
    assert.equal(load.replayedSteps, 0);
    await env.release(s);
  } finally {
    await Promise.all(servers.map((s) => s.close()));
  }
});
