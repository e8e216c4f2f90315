/**
 * Sticky routing over real HTTP servers (the project's fault server, no faults): in one TRACE step
 * with prefix continuations, how often does a follow-up call — the next turn of a trajectory, or the
 * first turn of a continuation restored from a prefix — go to another server than the call whose
 * answer ends its prefix? Each such switch is a prefix-cache miss on a real inference server.
 *
 * Measured on the servers' side: every reply carries a unique marker, so a request's prompt names the
 * earlier request it extends (the one whose prompt + reply is its longest prefix).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { scriptedReply, startFaultServer, type FaultServer } from '../../src/faults/index.ts';
import { OpenAIPolicy, Router } from '../../src/policy/index.ts';
import { runRolloutService, WeightsGate } from '../../src/service/index.ts';

interface Served {
  server: number;
  prompt: string;
  reply: string;
}

/** A scripted agent that searches twice before answering, each reply marked with a number unique across servers. */
function markedScript(server: number, log: Served[]) {
  return (prompt: string) => {
    const dialogue = prompt.slice(prompt.lastIndexOf('Question:'));
    const blocks = dialogue.split('<information>');
    // Before two searches came back, answer as if none had: search again. Comparisons ("…, A or B?")
    // are then answered A and B in turn, so trees hold both rewards.
    const options = /, (.+) or (.+)\?/.exec(dialogue);
    const base =
      blocks.length < 3
        ? scriptedReply(blocks[0]!)
        : options
          ? `<think>pick</think>\n<answer>${options[1 + (log.length % 2)]}</answer>`
          : scriptedReply(dialogue);
    const reply = base.replace('<think>', `<think>[r${log.length}] `);
    log.push({ server, prompt, reply });
    return reply;
  };
}

/** Follow-up calls, and the (prefix call, follow-up) pairs served by different servers. */
export function switches(log: readonly Served[]) {
  const successors = new Map<number, number>();
  const pred = log.map((r, i) => {
    let best = -1;
    let bestLength = -1;
    for (const [j, q] of log.entries()) {
      const prefix = q.prompt + q.reply;
      if (j !== i && prefix.length > bestLength && r.prompt.startsWith(prefix)) {
        best = j;
        bestLength = prefix.length;
      }
    }
    if (best >= 0) successors.set(best, (successors.get(best) ?? 0) + 1);
    return best;
  });
  let followUps = 0;
  let continuations = 0;
  let continuationsSwitched = 0;
  const moved: Array<[number, number]> = [];
  for (const [i, p] of pred.entries()) {
    if (p < 0) continue;
    followUps++;
    const away = log[i]!.server !== log[p]!.server;
    if (away) moved.push([p, i]);
    // A prefix extended by more than one call: the trajectory's own next turn and its continuations.
    if ((successors.get(p) ?? 0) > 1) {
      continuations++;
      if (away) continuationsSwitched++;
    }
  }
  return { followUps, switched: moved.length, moved, continuations, continuationsSwitched };
}

/**
 * One step (8 prompts, 40 trajectories, 8 calls in flight) over fault servers with the given delays.
 * random-tree expands uniformly random prefixes, so every step has continuations whatever the rewards.
 */
async function step(delays: readonly number[], options: { stickySlack?: number; failAfter?: number } = {}) {
  const log: Served[] = [];
  const servers: FaultServer[] = await Promise.all(delays.map((delayMs, i) => startFaultServer({ rate: 0, delayMs, script: markedScript(i, log) })));
  const out = join(mkdtempSync(join(tmpdir(), 'trace-sticky-')), 'run');
  const gate = new WeightsGate({ dir: out, pollMs: 20 });
  const policy = new OpenAIPolicy({
    baseURLs: servers.map((s) => s.url),
    model: 'fault',
    ...(options.stickySlack !== undefined ? { stickySlack: options.stickySlack } : {}),
  });
  // Each new trajectory's routing decision, with the servers' loads it was made on (no faults here: all are up).
  const fresh: Array<{ load: number[]; index: number }> = [];
  const acquire = policy.router.acquire.bind(policy.router);
  policy.router.acquire = (key?: string) => {
    const load = policy.router.inFlight();
    const isFresh = key !== undefined && policy.router.routeOf(key) === undefined;
    const route = acquire(key);
    if (isFresh) fresh.push({ load, index: route.index });
    return route;
  };
  let closed: Promise<void> | undefined;
  const watch =
    options.failAfter === undefined
      ? undefined
      : setInterval(() => {
          if (!closed && log.length >= options.failAfter!) closed = servers[0]!.close();
        }, 5);
  try {
    await runRolloutService({
      out,
      config: {
        steps: 1,
        pool: 8,
        strategy: { name: 'random-tree', budget: 40 },
        env: { questions: 300 },
        engine: { concurrency: 8, maxTurns: 5, retry: { baseDelayMs: 5, maxAttempts: 4 } },
      },
      policy,
      gate,
      format: 'jsonl',
      clock: () => performance.now(),
    });
  } finally {
    if (watch) clearInterval(watch);
    await gate.close();
    await Promise.all(servers.map((s, i) => (i === 0 && closed ? closed : s.close())));
  }
  return { log, fresh, ...switches(log), perServer: delays.map((_, i) => log.filter((r) => r.server === i).length) };
}

test('sticky routing: no follow-up call leaves its prefix’s server, continuations included; each new trajectory goes to a least-loaded server', async (t) => {
  for (const delays of [
    [15, 15],
    [30, 5, 5],
  ]) {
    const r = await step(delays);
    t.diagnostic(
      `servers ${delays.join('/')} ms: ${r.switched}/${r.followUps} follow-ups switched, continuations ${r.continuationsSwitched}/${r.continuations}; calls per server ${r.perServer.join(', ')}`,
    );
    assert.ok(r.followUps > 40 && r.continuations > 5, `the step has follow-ups (${r.followUps}) and continuations (${r.continuations})`);
    assert.equal(r.switched, 0, 'every follow-up went to the server of its prefix');
    // Work spreads by the router's rule, checked at each decision rather than as shares of calls (which
    // follow the servers' speeds and the machine's load): every new trajectory went to a least-loaded
    // server, and some did while the servers' loads differed, so the rule steered them.
    assert.ok(r.fresh.length >= 8, `new trajectories were routed (${r.fresh.length})`);
    for (const f of r.fresh) assert.equal(f.load[f.index], Math.min(...f.load), `a new trajectory went to server ${f.index} at loads ${f.load}`);
    assert.ok(
      r.fresh.some((f) => Math.max(...f.load) > Math.min(...f.load)),
      'some new trajectory was routed while another server was busier',
    );
  }
});

test('sticky routing with a load limit (stickySlack) moves follow-ups: the router without it is what removes the misses', async (t) => {
  // Uneven servers: the slow one holds more requests in flight, which a load limit reacts to.
  const r = await step([30, 5, 5], { stickySlack: 1 });
  t.diagnostic(`stickySlack 1: ${r.switched}/${r.followUps} follow-ups switched (${((100 * r.switched) / r.followUps).toFixed(0)} %)`);
  assert.ok(r.switched > 0, 'a load limit of one request moves some follow-ups');
});

test('sticky routing: when a server goes down its trajectories move to another and stay there', async (t) => {
  const r = await step([10, 10], { failAfter: 30 });
  t.diagnostic(`server 0 closed after 30 calls: ${r.switched}/${r.followUps} follow-ups switched; calls per server ${r.perServer.join(', ')}`);
  assert.ok(r.switched > 0, 'trajectories of the closed server moved');
  assert.ok(
    r.moved.every(([p]) => r.log[p]!.server === 0),
    'only follow-ups of prefixes the closed server had served changed server',
  );
  // So the surviving server took them over and kept them (one that moved back would be a switch away
  // from server 1). Shares of calls are not compared: they follow when the close lands in the step.
  assert.ok(
    r.moved.every(([, i]) => r.log[i]!.server === 1),
    'moved follow-ups went to the surviving server',
  );
});

test('router: continuations inherit their prefix trajectory’s server; a failed server loses its keys and rests', () => {
  let now = 0;
  const r = new Router(['a', 'b'], { cooldownMs: 100, now: () => now });
  const t0 = r.acquire('q1/0');
  const t1 = r.acquire('q1/1');
  assert.deepEqual([t0.index, t1.index], [0, 1], 'bare rollouts: least loaded, ties to the lowest index');
  const busy = [r.acquire('q2/0'), r.acquire('q2/1'), r.acquire('q2/2')];
  assert.deepEqual(r.inFlight(), [3, 2]);
  assert.equal(r.acquire('q1/0').index, 0, 'a trajectory stays on its server however loaded');
  assert.equal(r.acquire('q1/0/0/2').index, 0, 'a continuation from q1/0/0 (a node of q1/0) goes where q1/0 went');
  assert.equal(r.acquire('q1/1/1').index, 1);
  assert.equal(r.acquire('q1/0/0/2/0/1').index, 0, 'a continuation of a continuation too');
  for (const h of busy) h.done();

  r.acquire('q1/0').failed();
  assert.equal(r.acquire('q1/0').index, 1, 'its retry leaves the failed server');
  assert.equal(r.acquire('q1/0/3').index, 1, 'continuations of the moved trajectory follow it');
  assert.equal(r.acquire('q1/0/0/2').index, 1, 'a key routed to the failed server moves on its next call');
  assert.equal(r.acquire('q3/0').index, 1, 'the failed server gets no new keys while it rests');
  now = 200;
  assert.equal(r.acquire('q4/0').index, 0, 'after its rest it takes new keys again');
  assert.equal(r.acquire('q1/0').index, 1, 'moved keys stay where they moved');
});

test('router: with every server down it still routes, and memory of routes is bounded', () => {
  const r = new Router(['a', 'b'], { cooldownMs: 1000, now: () => 0, maxSticky: 3 });
  r.acquire('x/0').failed();
  r.acquire('y/0').failed();
  assert.equal(r.acquire('z/0').index, 0, 'all down: least loaded of all');
  for (const k of ['k/0', 'k/1', 'k/2', 'k/3']) r.acquire(k).done();
  assert.equal(r.routeOf('z/0'), undefined, 'the least recently routed key was forgotten');
  assert.notEqual(r.routeOf('k/3'), undefined);
});
