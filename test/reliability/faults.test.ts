/**
 * The fault injectors against the real engine: a faulty OpenAI-compatible server (hono on an
 * ephemeral port) behind the OpenAI policy, and a world environment whose tool calls throw or hang.
 * Whatever fails, every trajectory the ledger counted is a leaf in a tree, and failures are data.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { WorldEnv } from '../../src/env/index.ts';
import { SERVER_FAULT_KINDS, faultFor, startFaultServer, withToolFaults } from '../../src/faults/index.ts';
import { OpenAIPolicy } from '../../src/policy/index.ts';
import { createStrategy } from '../../src/allocate/index.ts';
import { runStep, type EngineEvent } from '../../src/rollout/index.ts';
import { leaves, type RolloutTree } from '../../src/tree/index.ts';
import { createRng } from '../../src/util/rng.ts';

const env = new WorldEnv({ seed: 3, questions: 200 });
const prompts = env.train.slice(0, 6);
const fast = { timeoutMs: 1_500, retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5 } };
const leafCount = (trees: RolloutTree[]) => trees.reduce((n, t) => n + leaves(t).length, 0);

// The tests share nothing but the (stateless) world, each starting its own servers; they mostly wait
// for hangs to time out, so they run at once.
describe('fault injectors against the engine', { concurrency: true }, () => {
  test('fault draws depend only on seed and request number, and hit the asked rate', () => {
    const plan = { rate: 0.2, kinds: [...SERVER_FAULT_KINDS], seed: 5 };
    const draws = Array.from({ length: 5000 }, (_, n) => faultFor(plan, n));
    assert.deepEqual(
      draws,
      Array.from({ length: 5000 }, (_, n) => faultFor(plan, n)),
    );
    const rate = draws.filter((d) => d !== 'ok').length / draws.length;
    assert.ok(Math.abs(rate - 0.2) < 0.02, `fault rate ${rate}`);
    for (const k of SERVER_FAULT_KINDS) assert.ok(draws.includes(k), `kind ${k} is drawn`);
    assert.ok(faultFor({ ...plan, rate: 0 }, 3) === 'ok' && faultFor({ ...plan, rate: 1 }, 3) !== 'ok');
  });

  test('each server fault kind reaches the engine as the right failure, and the ledger still balances', async () => {
    const expected: Record<string, string | undefined> = {
      server_error: 'server_error',
      hang: 'timeout',
      close: 'server_error',
      malformed: 'parse_error',
      truncated: 'parse_error',
      broken_tool_call: undefined,
    };
    // One server per kind, all at once (the hang kind waits out three timeouts).
    await Promise.all(
      SERVER_FAULT_KINDS.map(async (kind) => {
        const server = await startFaultServer({ rate: 1, kinds: [kind], seed: 1 });
        try {
          const policy = new OpenAIPolicy({ baseURLs: [server.url], model: 'faulty' });
          const res = await runStep({
            prompts: prompts.slice(0, 2),
            env,
            policy,
            rng: createRng(1),
            rootPlan: new Map(prompts.slice(0, 2).map((p) => [p.id, 2])),
            settings: { ...fast, maxTurns: 3 },
          });
          const code = expected[kind];
          if (code) {
            assert.deepEqual(Object.keys(res.failures), [code], `${kind} → ${code}`);
            assert.equal(res.failures[code as keyof typeof res.failures], 4, `${kind}: all 4 trajectories dropped after retries`);
            assert.equal(server.counts[kind], 4 * 3, `${kind}: 3 attempts per trajectory`);
          } else {
            // A broken tool call is the model's fault: an invalid turn, no retry, the episode goes on.
            assert.deepEqual(res.failures, {});
            const turns = res.trees.flatMap((t) =>
              Object.values(t.nodes)
                .filter((n) => n.turn)
                .map((n) => n.turn!),
            );
            assert.ok(
              turns.every((t) => t.action.type === 'invalid'),
              'every broken call is an invalid action',
            );
          }
          assert.equal(res.spend.bare, leafCount(res.trees), `${kind}: ledger = leaves`);
        } finally {
          await server.close();
        }
      }),
    );
  });

  test('a 30% faulty server + 20% faulty tools: a TRACE step finishes, spends ≤ B, and ledger = leaves', async () => {
    const server = await startFaultServer({ rate: 0.3, seed: 9 });
    const faulty = withToolFaults(env, { rate: 0.2, seed: 9 });
    try {
      const policy = new OpenAIPolicy({ baseURLs: [server.url], model: 'faulty' });
      const retries: EngineEvent[] = [];
      const res = await runStep({
        prompts,
        env: faulty,
        policy,
        rng: createRng(2),
        strategy: createStrategy('trace', { budget: 24, continuations: 2 }),
        settings: { ...fast, concurrency: 8 },
        onEvent: (e) => e.kind === 'retry' && retries.push(e),
      });
      assert.equal(res.cancelled, false);
      const spent = res.spend.bare + res.spend.continuation;
      assert.ok(spent <= 24);
      assert.equal(spent, leafCount(res.trees), 'no trajectory counted twice or lost');
      assert.ok(server.counts.ok > 0 && server.requests() > server.counts.ok, 'faults were injected');
      assert.ok(faulty.toolFaults.throw + faulty.toolFaults.hang > 0, 'tool faults were injected');
      assert.ok(retries.length > 0, 'failures were retried');
      for (const t of res.trees) for (const l of leaves(t)) assert.ok(l.end === 'error' ? l.reward === undefined : l.reward === 0 || l.reward === 1);
    } finally {
      await server.close();
    }
  });

  test('a tool that hangs forever times out (tool_error) instead of stalling the step', async () => {
    const hanging = withToolFaults(env, { rate: 1, kinds: ['hang'], seed: 1 });
    const server = await startFaultServer({ rate: 0 });
    try {
      const policy = new OpenAIPolicy({ baseURLs: [server.url], model: 'ok' });
      const res = await runStep({
        prompts: prompts.slice(0, 2),
        env: hanging,
        policy,
        rng: createRng(1),
        rootPlan: new Map(prompts.slice(0, 2).map((p) => [p.id, 1])),
        settings: { ...fast, maxTurns: 3 },
      });
      assert.equal(res.failures.tool_error, 2);
      assert.equal(hanging.toolFaults.hang, 2 * 3, 'each trajectory tried its tool call 3 times');
      assert.equal(res.spend.bare, leafCount(res.trees));
    } finally {
      await server.close();
    }
  });

  test('as a proxy: healthy requests are forwarded to the upstream server, faults are injected in front', async () => {
    const upstream = await startFaultServer({ rate: 0, script: () => '<think>from upstream</think>\n<answer>42</answer>' });
    const proxy = await startFaultServer({ rate: 0.5, kinds: ['server_error'], seed: 4, upstream: upstream.url });
    try {
      const statuses: number[] = [];
      const texts: string[] = [];
      for (let i = 0; i < 20; i++) {
        const res = await fetch(`${proxy.url}/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'm', prompt: 'Question: q', stop: ['</answer>'] }),
        });
        statuses.push(res.status);
        if (res.ok) texts.push(((await res.json()) as { choices: Array<{ text: string }> }).choices[0]!.text);
      }
      assert.equal(statuses.filter((s) => s === 200).length, proxy.counts.ok);
      assert.equal(upstream.requests(), proxy.counts.ok, 'only healthy requests reach the upstream');
      assert.ok(proxy.counts.server_error > 0 && proxy.counts.ok > 0);
      assert.ok(
        texts.every((t) => t === '<think>from upstream</think>\n<answer>42'),
        'the upstream answered (stop string applied there)',
      );
    } finally {
      await proxy.close();
      await upstream.close();
    }
  });
});
