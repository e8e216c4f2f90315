/**
 * Engine tests on the real simulator environment and its matching random policy (src/env), wrapped
 * to add delays, count calls and inject failures.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runStep, type EngineEvent } from '../../src/rollout/index.ts';
import { engineSettings } from '../../src/rollout/settings.ts';
import { getNode, leaves, pathTo, turnsTo } from '../../src/tree/index.ts';
import { createRng } from '../../src/util/rng.ts';
import { InstrumentedPolicy, SpyEnv, SpyTruthEnv, fixedAllocator, scrambledDelay, serverError, sim, treeCounts } from './helpers.ts';

const fast = { retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 } };

test('bare rollouts: m slots per prompt, deterministic ids, ledger matches the trees', async () => {
  const { env, policy, prompts } = sim();
  const counted = new InstrumentedPolicy(policy);
  const plan = new Map([
    [prompts[0].id, 3],
    [prompts[1].id, 2],
  ]);
  const res = await runStep({ prompts, env, policy: counted, rng: createRng(1), rootPlan: plan, settings: fast });
  assert.equal(res.trees.length, 2);
  assert.deepEqual(
    res.trees[0].nodes[prompts[0].id].children,
    [0, 1, 2].map((s) => `${prompts[0].id}/${s}`),
  );
  for (const t of res.trees) for (const l of leaves(t)) assert.ok(l.end === 'answer' || l.end === 'turn_limit');
  const c = treeCounts(res.trees);
  assert.deepEqual([res.spend.bare, res.spend.continuation, res.spend.turns, res.spend.tokens], [5, 0, c.turns, counted.tokens]);
  assert.equal(counted.calls, c.turns);
});

test('trees do not depend on scheduling: concurrency 1 vs 6 with scrambled completion order', async () => {
  const run = async (concurrency: number, salt: number) => {
    const { env, policy, prompts } = sim(3);
    const p = new InstrumentedPolicy(policy, { delayMs: scrambledDelay(4, salt) });
    const res = await runStep({ prompts, env, policy: p, rng: createRng(9), strategy: fixedAllocator(3, 2, 2), settings: { ...fast, concurrency } });
    return { trees: res.trees, order: p.log.join(',') };
  };
  const a = await run(1, 1);
  const b = await run(6, 2);
  assert.notEqual(a.order, b.order, 'the two runs must really complete in different orders');
  assert.deepEqual(b.trees, a.trees);
});

test('requests in flight never exceed the concurrency setting, and reach it', async () => {
  const { env, policy, prompts } = sim();
  const p = new InstrumentedPolicy(policy, { delayMs: () => 3 });
  await runStep({ prompts, env, policy: p, rng: createRng(2), rootPlan: new Map(prompts.map((q) => [q.id, 4])), settings: { concurrency: 3 } });
  assert.equal(p.peak, 3);
});

test('prefix expansion: candidates, predicted/expanded marks, continuations restore the exact prefix', async () => {
  const { env: inner, policy, prompts } = sim(5);
  const env = new SpyTruthEnv(inner);
  const seen: Array<{ promptId: string; ids: string[]; budget: number }> = [];
  const scorer = (hs: readonly { turns: readonly unknown[] }[]) => hs.map((h) => 0.1 * h.turns.length);
  const res = await runStep({ prompts, env, policy, rng: createRng(4), strategy: fixedAllocator(3, 2, 2), scorer, settings: fast });
  assert.equal(seen.length, 0, 'the allocator here does not record');
  let continuations = 0;
  for (const tree of res.trees) {
    const expanded = Object.values(tree.nodes).filter((n) => n.expanded !== undefined);
    for (const node of expanded) {
      assert.equal(node.predicted, 0.1 * node.depth, 'q = scorer(H) is stored on the node');
      const conts = node.children.slice(1).map((id) => getNode(tree, id));
      assert.equal(conts.length, node.expanded);
      for (const c of conts) {
        continuations++;
        assert.equal(c.origin, 'continuation');
        // The continuation's path starts with exactly the prefix's nodes.
        assert.deepEqual(
          pathTo(tree, c.id)
            .slice(0, node.depth)
            .map((n) => n.id),
          pathTo(tree, node.id).map((n) => n.id),
        );
        const restored = env.restores.filter((r) => r.promptId === tree.promptId && r.turns.length === node.depth);
        assert.ok(
          restored.some((r) => JSON.stringify(r.turns) === JSON.stringify(turnsTo(tree, node.id))),
          `env.restore got the prefix of ${node.id}`,
        );
      }
    }
  }
  assert.ok(continuations > 0, 'some prompt had intermediate prefixes to expand');
  assert.equal(res.spend.continuation, continuations);
  assert.equal(treeCounts(res.trees).continuation, continuations);
});

test('prefix candidates carry q, r, entropy and the true p; budget is prefixBudget(m)', async () => {
  const { env, policy, prompts } = sim(5);
  const seen: Array<{ promptId: string; ids: string[]; budget: number }> = [];
  let captured: Array<{ id: string; q: number; r: number; depth: number; entropy?: number; p?: number }> = [];
  const alloc = fixedAllocator(3, 1, 2, seen);
  const planPrefixes = alloc.prefixes!.plan;
  alloc.prefixes!.plan = (input) => {
    captured = captured.concat(input.prefixes.map((x) => ({ ...x })));
    return planPrefixes(input);
  };
  const res = await runStep({ prompts, env, policy, rng: createRng(4), strategy: alloc, settings: fast });
  assert.ok(seen.length > 0);
  for (const s of seen) assert.equal(s.budget, 6);
  for (const c of captured) {
    const tree = res.trees.find((t) => t.nodes[c.id])!;
    const node = getNode(tree, c.id);
    assert.ok(c.depth >= 1 && node.children.length >= 1, 'intermediate prefix: 1 ≤ t < T_j');
    assert.equal(c.q, 0.5);
    assert.ok(typeof c.entropy === 'number' && c.entropy > 0);
    assert.ok(
      Math.abs(c.p! - env.trueSuccess(tree.nodes[tree.promptId] ? prompts.find((p) => p.id === tree.promptId)! : prompts[0], turnsTo(tree, c.id))) < 1e-12,
    );
    const leaf = leaves(tree, node.children[0])[0];
    assert.equal(c.r, leaf.reward);
  }
});

test('a prompt expands as soon as its own bare rollouts finish (no global wait)', async () => {
  const { env, policy, prompts } = sim(5);
  const slow = prompts[1].id;
  const p = new InstrumentedPolicy(policy, { delayMs: (ctx) => (ctx.prompt.id === slow ? 40 : 0) });
  const events: EngineEvent[] = [];
  await runStep({
    prompts: prompts.slice(0, 2),
    env,
    policy: p,
    rng: createRng(4),
    strategy: fixedAllocator(3, 3, 1),
    settings: fast,
    onEvent: (e) => events.push(e),
  });
  const firstExpand = events.findIndex((e) => e.kind === 'expand' && e.promptId === prompts[0].id);
  const slowBareDone = events.map((e) => e.kind === 'trajectory' && e.origin === 'bare' && e.promptId === slow).lastIndexOf(true);
  assert.ok(firstExpand >= 0, 'the fast prompt was expanded');
  assert.ok(firstExpand < slowBareDone, 'the fast prompt expanded before the slow prompt finished its bare rollouts');
  assert.equal(events.at(-1)!.kind, 'done');
});

test('transient server errors are retried with backoff; the ledger counts every attempt', async () => {
  const { env, policy, prompts } = sim();
  const failedOnce = new Set<string>();
  const p = new InstrumentedPolicy(policy, {
    fail: (ctx) => {
      const node = ctx.callId!.split('#')[0];
      if (!failedOnce.has(node)) {
        failedOnce.add(node);
        return serverError();
      }
    },
  });
  const events: EngineEvent[] = [];
  const res = await runStep({
    prompts,
    env,
    policy: p,
    rng: createRng(1),
    rootPlan: new Map([[prompts[0].id, 3]]),
    settings: fast,
    onEvent: (e) => events.push(e),
  });
  const c = treeCounts(res.trees);
  assert.equal(res.progress.failed, 0);
  assert.equal(p.calls, 2 * c.turns, 'each turn failed once and succeeded on the second attempt');
  assert.equal(res.spend.turns, p.calls, 'failed attempts count as calls');
  assert.equal(res.spend.tokens, p.tokens, 'failed attempts settle 0 tokens');
  assert.equal(events.filter((e) => e.kind === 'retry').length, c.turns);
});

test('a call that fails on every attempt ends the trajectory with end=error and the reason on the node', async () => {
  const { env, policy, prompts } = sim();
  const p = new InstrumentedPolicy(policy, { fail: (ctx) => (ctx.callId!.startsWith(`${prompts[0].id}/1`) ? serverError('HTTP 500 boom') : undefined) });
  const res = await runStep({
    prompts,
    env,
    policy: p,
    rng: createRng(1),
    rootPlan: new Map([[prompts[0].id, 3]]),
    settings: { ...fast, retry: { ...fast.retry, maxAttempts: 3 } },
  });
  const bad = getNode(res.trees[0], `${prompts[0].id}/1`);
  assert.equal(bad.end, 'error');
  assert.equal(bad.reward, undefined);
  assert.equal(bad.turn!.error!.code, 'server_error');
  assert.match(bad.turn!.error!.message, /HTTP 500 boom \(attempt 3 of 3\)/);
  assert.deepEqual(res.failures, { server_error: 1 });
  assert.equal(res.spend.turns, p.calls);
  assert.equal(res.spend.bare, 3, 'the failed trajectory still counts: it made calls');
});

test('a hanging call times out (even when the policy ignores its signal)', async () => {
  const { env, policy, prompts } = sim();
  const p = new InstrumentedPolicy(policy, { fail: (ctx) => (ctx.callId === `${prompts[0].id}/0#1` ? 'hang' : undefined) });
  const res = await runStep({ prompts, env, policy: p, rng: createRng(1), rootPlan: new Map([[prompts[0].id, 1]]), settings: { ...fast, timeoutMs: 250 } });
  const retries = res.trees[0].nodes[`${prompts[0].id}/0`];
  assert.equal(retries.turn!.error, undefined, 'the second attempt succeeded');
  assert.equal(p.log[0], `${prompts[0].id}/0#1`);
  assert.equal(p.log[1], `${prompts[0].id}/0#2`);
});

test("a trajectory's calls share one signal until a timeout aborts it; the retry gets a live one", async () => {
  const { env, policy, prompts } = sim();
  // What each call saw: its signal, and whether that signal was already aborted when the call began.
  const seen = new Map<string, { signal: AbortSignal; abortedAtStart: boolean }>();
  const p = new InstrumentedPolicy(policy, {
    fail: (ctx) => {
      seen.set(ctx.callId!, { signal: ctx.signal!, abortedAtStart: ctx.signal!.aborted });
      return ctx.callId === `${prompts[0].id}/0/0#1` ? 'hang' : undefined;
    },
  });
  const toolSignals: AbortSignal[] = [];
  // The simulator with its step spied on (everything else through the prototype chain).
  const spied: typeof env = Object.assign(Object.create(env) as typeof env, {
    step: (state: Parameters<typeof env.step>[0], action: Parameters<typeof env.step>[1], options?: { signal?: AbortSignal }) => {
      toolSignals.push(options!.signal!);
      return env.step(state, action);
    },
  });
  const res = await runStep({
    prompts,
    env: spied,
    policy: p,
    rng: createRng(1),
    rootPlan: new Map([[prompts[0].id, 1]]),
    settings: { ...fast, timeoutMs: 250 },
  });
  const first = seen.get(`${prompts[0].id}/0#1`)!;
  const hung = seen.get(`${prompts[0].id}/0/0#1`);
  assert.ok(hung, 'the trajectory reached its second turn');
  assert.equal(hung.signal, first.signal, 'turns of one trajectory share the signal');
  assert.ok(toolSignals.includes(first.signal), "the tool step carries the trajectory's signal too");
  assert.equal(hung.signal.aborted, true, 'the timeout aborted the hung call');
  const retry = seen.get(`${prompts[0].id}/0/0#2`)!;
  assert.notEqual(retry.signal, hung.signal, 'the retry gets a fresh signal');
  assert.equal(retry.abortedAtStart, false);
  assert.equal(res.trees[0].nodes[`${prompts[0].id}/0/0`]!.turn!.error, undefined, 'the retry succeeded');
  for (const { abortedAtStart } of seen.values()) assert.equal(abortedAtStart, false, 'no call starts with an aborted signal');
});

test("each call gets the whole timeout though a trajectory's calls share one timer, and no timer outlives the step", async () => {
  const { env, policy, prompts } = sim();
  const timeoutMs = 300;
  const hungId = `${prompts[0].id}/0/0#1`;
  let hungStart = 0;
  let hungAbortedAfter = -1;
  // The first turn takes most of the timeout; the second hangs. A timer armed for the first call fires
  // 100 ms into the second: it must wait out the second call's own deadline, not abort it then.
  const p = new InstrumentedPolicy(policy, {
    delayMs: (ctx) => (ctx.callId === `${prompts[0].id}/0#1` ? 200 : 0),
    fail: (ctx) => {
      if (ctx.callId !== hungId) return undefined;
      hungStart = performance.now();
      ctx.signal!.addEventListener('abort', () => (hungAbortedAfter = performance.now() - hungStart), { once: true });
      return 'hang';
    },
  });
  const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
  const before = timers();
  const res = await runStep({ prompts, env, policy: p, rng: createRng(1), rootPlan: new Map([[prompts[0].id, 1]]), settings: { ...fast, timeoutMs } });
  assert.ok(hungAbortedAfter >= timeoutMs - 2, `the hung call was aborted ${hungAbortedAfter.toFixed(0)} ms after it began, before its ${timeoutMs} ms`);
  assert.ok(hungAbortedAfter < timeoutMs + 250, `the hung call was aborted only ${hungAbortedAfter.toFixed(0)} ms after it began`);
  assert.equal(res.trees[0].nodes[`${prompts[0].id}/0/0`]!.turn!.error, undefined, 'the retry succeeded');
  assert.equal(timers(), before, 'the step left no timer behind');
});

test('tool errors are retried, then recorded as tool_error', async () => {
  const { env: inner, policy, prompts } = sim();
  const env = new SpyEnv(inner, (a) => a.type === 'search');
  const res = await runStep({ prompts, env, policy, rng: createRng(1), rootPlan: new Map([[prompts[0].id, 4]]), settings: fast });
  const errs = leaves(res.trees[0]).filter((l) => l.end === 'error');
  assert.ok(errs.length > 0, 'some rollout searched');
  for (const l of errs) {
    assert.equal(l.turn!.error!.code, 'tool_error');
    assert.equal(l.turn!.action.type, 'search', 'the policy turn is kept with the error');
  }
  assert.equal(res.spend.toolCalls, 3 * errs.length, 'each failed attempt counts as a tool call');
});

test('the trajectory cap holds: fewer rollouts start, spend never exceeds it', async () => {
  const { env, policy, prompts } = sim();
  const res = await runStep({ prompts, env, policy, rng: createRng(1), strategy: { ...fixedAllocator(3, 4, 3), cap: 5 }, settings: fast });
  assert.equal(res.spend.bare + res.spend.continuation, 5);
  const c = treeCounts(res.trees);
  assert.equal(c.bare + c.continuation, 5);
});

test('cancellation stops in-flight work; nothing is left reserved and the tree is consistent', async () => {
  const { env, policy, prompts } = sim();
  const ctl = new AbortController();
  const p = new InstrumentedPolicy(policy, { delayMs: () => 5 });
  setTimeout(() => ctl.abort(), 12);
  const res = await runStep({
    prompts,
    env,
    policy: p,
    caps: { turns: 1000, tokens: 1_000_000 },
    rng: createRng(1),
    strategy: fixedAllocator(4, 2, 2),
    settings: { ...fast, concurrency: 2 },
    signal: ctl.signal,
  });
  assert.equal(res.cancelled, true);
  const c = treeCounts(res.trees);
  assert.ok(c.turns < 16, 'the run stopped early');
  assert.equal(res.spend.turns, p.calls, 'every issued call is counted, no more');
  assert.equal(res.spend.bare + res.spend.continuation, c.bare + c.continuation, 'trajectories with no node were refunded');
  for (const t of res.trees)
    for (const n of Object.values(t.nodes)) if (n.parent !== null && n.children.length === 0) assert.ok(n.end !== undefined, `leaf ${n.id} has an end`);
  assert.ok(res.ledger.tryReserveTurn(1000 - res.spend.turns > 0 ? 1 : 0) !== null, 'no reservation is left open');
});

test('multi-round roots (DAPO protocol): later rounds see earlier results and get fresh slots', async () => {
  const { env, policy, prompts } = sim();
  const seenResults: number[] = [];
  const res = await runStep({
    prompts,
    env,
    policy,

    rng: createRng(1),
    settings: fast,
    strategy: {
      cap: 1_000_000,
      roots: {
        rounds: 'until-empty',
        plan: ({ round, results }) => {
          seenResults.push([...results.values()].reduce((a, r) => a + r.length, 0));
          if (round === 0) return new Map([[prompts[0].id, 2]]);
          if (round === 1)
            return new Map([
              [prompts[0].id, 2],
              [prompts[1].id, 2],
            ]);
          return new Map();
        },
      },
    },
  });
  assert.deepEqual(seenResults, [0, 2, 6]);
  assert.deepEqual(
    res.trees[0].nodes[prompts[0].id].children.map((id) => id.split('/')[1]),
    ['0', '1', '2', '3'],
  );
  assert.equal(res.rounds.length, 2);
});

test('a timeout longer than Node’s timer limit is waited out, not taken as 1 ms', async () => {
  for (const timeoutMs of [3e9]) {
    const { env, policy, prompts } = sim();
    const p = new InstrumentedPolicy(policy, { delayMs: () => 20 });
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      const res = await runStep({ prompts, env, policy: p, rng: createRng(1), rootPlan: new Map([[prompts[0].id, 2]]), settings: { ...fast, timeoutMs } });
      for (const t of res.trees) for (const n of Object.values(t.nodes)) assert.equal(n.turn?.error, undefined, `timeoutMs ${timeoutMs}: no call timed out`);
      assert.equal(res.spend.bare, 2);
    } finally {
      process.off('warning', onWarning);
    }
    assert.deepEqual(warnings, [], `timeoutMs ${timeoutMs}: no TimeoutOverflowWarning`);
  }
});

test('a backoff cap past Node’s longest timer is refused with the limit named (a longer timer fires after 1 ms)', () => {
  assert.throws(() => engineSettings({ retry: { maxDelayMs: 3e9 } }), /maxDelayMs[\s\S]*2147483647/);
  assert.equal(engineSettings({ retry: { maxDelayMs: 2 ** 31 - 1 } }).retry.maxDelayMs, 2 ** 31 - 1);
});
