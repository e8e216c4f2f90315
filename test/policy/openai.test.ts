/**
 * The OpenAI-compatible policy against a REAL local HTTP server (openai-stand-in.ts, hono on an
 * ephemeral port), which stands in for an inference server until the tiny-LM issue brings llama.cpp.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WorldEnv } from '../../src/env/index.ts';
import { OpenAIPolicy, Router, restoreStopTag } from '../../src/policy/index.ts';
import { runStep } from '../../src/rollout/index.ts';
import { leaves, pathTo, type RolloutTree } from '../../src/tree/index.ts';
import { createRng } from '../../src/util/rng.ts';
import { allSampled } from '../../src/policy/openai/response.ts';
import { startStandIn, type Fault, type StandInOptions } from './openai-stand-in.ts';
import { rawBodyServer, REQUEST_VARIANTS } from './raw-bodies.ts';

const env = new WorldEnv({ seed: 1, questions: 200 });
const prompts = env.train.filter((p) => (p.meta as { world: { hops: number } }).world.hops === 1).slice(0, 3);
const fast = { retry: { baseDelayMs: 1, maxDelayMs: 5 }, maxTokensPerTurn: 256 };

async function withServers<T>(
  count: number,
  options: StandInOptions,
  fn: (urls: string[], servers: Awaited<ReturnType<typeof startStandIn>>[]) => Promise<T>,
): Promise<T> {
  const servers = await Promise.all(Array.from({ length: count }, () => startStandIn(options)));
  try {
    return await fn(
      servers.map((s) => s.url),
      servers,
    );
  } finally {
    await Promise.all(servers.map((s) => s.close()));
  }
}

const turnsOf = (trees: RolloutTree[]) =>
  trees.flatMap((t) =>
    Object.values(t.nodes)
      .filter((n) => n.turn)
      .map((n) => n.turn!),
  );

test('completions mode: Search-R1 turns with stop tags restored, logprobs summed, request carries the settings', async () => {
  await withServers(1, {}, async ([url], [server]) => {
    const policy = new OpenAIPolicy({ baseURLs: [url!], model: 'stand-in', topK: 20 });
    const res = await runStep({ prompts, env, policy, rng: createRng(1), rootPlan: new Map(prompts.map((p) => [p.id, 2])), settings: fast });
    const turns = turnsOf(res.trees);
    assert.ok(turns.some((t) => t.action.type === 'search') && turns.some((t) => t.action.type === 'answer'));
    for (const t of turns) {
      assert.match(t.text!, /<\/(search|answer)>$/, 'the stripped stop tag is appended back');
      assert.notEqual(t.action.type, 'invalid');
      const n = [...t.text!.replace(/<\/(search|answer)>$/, '')].length;
      const expected = Array.from({ length: n }, (_, i) => -0.1 * ((i % 3) + 1)).reduce((a, b) => a + b, 0);
      assert.ok(Math.abs(t.logprob! - expected) < 1e-9);
      assert.equal(t.tokens, undefined, 'no ids without the vLLM extras');
    }
    for (const t of res.trees) for (const l of leaves(t)) assert.equal(l.end, 'answer');
    const body = server!.bodies[0]!;
    assert.deepEqual(body.stop, ['</search>', '</answer>']);
    assert.equal(body.max_tokens, 256);
    assert.equal(body.temperature, 1);
    assert.equal(body.top_k, 20);
    assert.equal(body.logprobs, 0);
    assert.equal(typeof body.seed, 'number');
    assert.equal(body.return_token_ids, undefined);
    // A later turn's prompt is exactly the rendered prompt plus the earlier turns' text and observations.
    const second = server!.bodies.find((b) => String(b.prompt).includes('<information>Doc'))!;
    assert.ok(String(second.prompt).startsWith(env.render(prompts.find((p) => String(second.prompt).includes(p.question))!)));
    assert.equal(
      res.spend.tokens,
      turns.reduce((a, t) => a + t.generatedTokens!, 0),
    );
  });
});

test('vLLM extras: token ids and logprobs kept per token, stop string included by the server', async () => {
  await withServers(1, {}, async ([url], [server]) => {
    const policy = new OpenAIPolicy({ baseURLs: [url!], model: 'stand-in', extras: 'vllm' });
    const res = await runStep({ prompts, env, policy, rng: createRng(1), rootPlan: new Map([[prompts[0]!.id, 2]]), settings: fast });
    for (const t of turnsOf(res.trees)) {
      assert.ok(t.tokens);
      assert.deepEqual(
        t.tokens.ids,
        [...t.text!].map((c) => c.codePointAt(0)),
      );
      assert.equal(t.tokens.logprobs.length, t.tokens.ids.length);
      assert.ok(t.tokens.mask.every((m) => m === 1));
      assert.equal(t.generatedTokens, t.tokens.ids.length);
    }
    assert.equal(server!.bodies[0]!.return_token_ids, true);
    assert.equal(server!.bodies[0]!.include_stop_str_in_output, true);
  });
});

test('completions mode sends exactly JSON.stringify(request(ctx)), whatever the options, greedy or sampled', async () => {
  // The raw text is checked here (the stand-in parses bodies): completions mode writes it without a body object.
  const { url, raw, close } = await rawBodyServer();
  try {
    const prompt = prompts[0]!;
    const turns = [
      { thought: 't', action: { type: 'search', input: 'Q "x"' }, observation: '\n<information>a\u0001b</information>\n', text: '<search>Q "x"</search>' },
    ];
    for (const options of REQUEST_VARIANTS)
      for (const greedy of [false, true])
        for (const maxTokens of [64, 128]) {
          const policy = new OpenAIPolicy({ baseURLs: [url], model: 'm "q"', ...options });
          const ctx = { prompt, rendered: env.render(prompt), turns, maxTokens, greedy, trajectoryId: 'q/0' };
          await policy.act({ ...ctx, rng: createRng(3).fork('c') });
          await policy.act({ ...ctx, rng: createRng(4).fork('c') }); // the second call of a kind reuses its cached frame
          assert.equal(raw.at(-2), JSON.stringify(policy.request({ ...ctx, rng: createRng(3).fork('c') })), JSON.stringify({ options, greedy, maxTokens }));
          assert.equal(raw.at(-1), JSON.stringify(policy.request({ ...ctx, rng: createRng(4).fork('c') })), JSON.stringify({ options, greedy, maxTokens }));
        }
  } finally {
    await close();
  }
});

test('completions mode: the prompt written from pieces escaped once each reads back as the whole conversation, a surrogate pair split across pieces included, and a changed turn is escaped again', async () => {
  const { url, raw, close } = await rawBodyServer();
  try {
    const prompt = prompts[0]!;
    // The rendered prompt ends with the high half of 😀 and the turn starts with its low half: escaped
    // apart, the two halves are written as \u escapes, which read back as the one character.
    const rendered = `${env.render(prompt)}\ud83d`;
    const turn = {
      thought: 't',
      action: { type: 'search', input: 'q' },
      observation: '\n<information>é "x"</information>\n',
      text: '\ude00<search>q</search>',
    };
    const policy = new OpenAIPolicy({ baseURLs: [url], model: 'm' });
    const ctx = { prompt, rendered, turns: [turn], maxTokens: 64, trajectoryId: 'q/0', rng: createRng(3) };
    await policy.act(ctx);
    assert.equal(JSON.parse(raw.at(-1)!).prompt, `${rendered}${turn.text}${turn.observation}`);
    assert.match(raw.at(-1)!, /\\ud83d\\ude00/);
    turn.observation = '\n<information>other</information>\n';
    await policy.act({ ...ctx, rng: createRng(3) });
    assert.equal(JSON.parse(raw.at(-1)!).prompt, `${rendered}${turn.text}${turn.observation}`);
  } finally {
    await close();
  }
});

test('chat mode: alternating messages, chat logprobs, greedy sends temperature 0', async () => {
  await withServers(1, {}, async ([url], [server]) => {
    const policy = new OpenAIPolicy({ baseURLs: [url!], model: 'stand-in', mode: 'chat', system: 'You are a search agent.' });
    const res = await runStep({ prompts, env, policy, rng: createRng(1), rootPlan: new Map([[prompts[0]!.id, 1]]), greedy: true, settings: fast });
    const leaf = leaves(res.trees[0]!)[0]!;
    assert.equal(leaf.end, 'answer');
    const last = server!.bodies.at(-1)!;
    const msgs = last.messages as Array<{ role: string; content: string }>;
    assert.deepEqual(
      msgs.map((m) => m.role),
      ['system', 'user', 'assistant', 'user'],
    );
    assert.equal(msgs[2]!.content, pathTo(res.trees[0]!, leaf.id)[0]!.turn!.text);
    assert.equal(last.temperature, 0);
    assert.equal(last.seed, undefined);
    assert.ok(typeof leaf.turn!.logprob === 'number' && leaf.turn!.logprob < 0);
  });
});

test('injected failures: 5xx and malformed bodies are retried, 4xx is not, hangs time out', async () => {
  const faults: Record<number, Fault> = { 0: 'error500', 1: 'malformed', 2: 'no_choices', 3: 'hang' };
  await withServers(1, { fault: (n) => faults[n] ?? 'ok' }, async ([url], [server]) => {
    const policy = new OpenAIPolicy({ baseURLs: [url!], model: 'stand-in' });
    const events: string[] = [];
    const res = await runStep({
      prompts,
      env,
      policy,

      rng: createRng(1),
      rootPlan: new Map([[prompts[0]!.id, 1]]),
      settings: { ...fast, concurrency: 1, timeoutMs: 2_000, retry: { maxAttempts: 5, baseDelayMs: 1, maxDelayMs: 2 } },
      onEvent: (e) => e.kind === 'retry' && events.push(e.error.code),
    });
    assert.deepEqual(events, ['server_error', 'parse_error', 'parse_error', 'timeout']);
    assert.equal(leaves(res.trees[0]!)[0]!.end, 'answer', 'the fifth attempt succeeded and the episode went on');
    assert.equal(res.spend.turns, server!.requests, 'every attempt counted as a call');
  });
  await withServers(1, { fault: () => 'error400' }, async ([url], [server]) => {
    const policy = new OpenAIPolicy({ baseURLs: [url!], model: 'stand-in' });
    const res = await runStep({ prompts, env, policy, rng: createRng(1), rootPlan: new Map([[prompts[0]!.id, 1]]), settings: fast });
    const leaf = leaves(res.trees[0]!)[0]!;
    assert.equal(leaf.end, 'error');
    assert.equal(leaf.turn!.error!.code, 'server_error');
    assert.match(leaf.turn!.error!.message, /HTTP 400.*attempt 1 of 5/, 'a 400 is not retried: the first of the default five attempts');
    assert.equal(server!.requests, 1, 'a 400 is not retried');
  });
});

test('requests in flight at the server stay within the engine concurrency', async () => {
  await withServers(1, { delayMs: 15 }, async ([url], [server]) => {
    const policy = new OpenAIPolicy({ baseURLs: [url!], model: 'stand-in' });
    await runStep({ prompts, env, policy, rng: createRng(1), rootPlan: new Map(prompts.map((p) => [p.id, 3])), settings: { ...fast, concurrency: 4 } });
    assert.equal(server!.peakInFlight, 4);
  });
});

test('several base URLs: least-loaded routing spreads requests; a trajectory sticks to its server', async () => {
  // Uneven servers: a follow-up turn is tempted to leave the slow server for the fast ones.
  const run = async (stickySlack: number) => {
    const servers = await Promise.all([startStandIn({ delayMs: 40 }), startStandIn({ delayMs: 1 }), startStandIn({ delayMs: 1 })]);
    try {
      const policy = new OpenAIPolicy({ baseURLs: servers.map((s) => s.url), model: 'stand-in', stickySlack });
      const res = await runStep({
        prompts,
        env,
        policy,
        rng: createRng(1),
        rootPlan: new Map(prompts.map((p) => [p.id, 6])),
        settings: { ...fast, concurrency: 6 },
      });
      const counts = servers.map((s) => s.requests);
      assert.equal(
        counts.reduce((a, b) => a + b, 0),
        turnsOf(res.trees).length,
      );
      let moved = 0;
      for (const s of servers) {
        for (const b of s.bodies.filter((x) => String(x.prompt).includes('<information>Doc'))) {
          const before = String(b.prompt).split('<information>Doc')[0]!;
          const first = before.slice(0, before.lastIndexOf('<think>'));
          if (!s.bodies.some((x) => String(x.prompt) === first)) moved++;
        }
      }
      return { counts, moved };
    } finally {
      await Promise.all(servers.map((s) => s.close()));
    }
  };
  const sticky = await run(100);
  assert.ok(
    sticky.counts.every((c) => c > 0),
    `every server got work: ${sticky.counts}`,
  );
  assert.equal(sticky.moved, 0, 'every follow-up turn went to the server of its first turn');
  // That a non-sticky router does move trajectories is checked deterministically in the router test
  // below (over HTTP it depends on timing).
});

test('router: least loaded first, sticky within slack, deterministic ties', () => {
  const r = new Router(['a', 'b', 'c'], { slack: 1 });
  const x = r.acquire('t1');
  const y = r.acquire('t2');
  assert.deepEqual([x.index, y.index], [0, 1]);
  const x2 = r.acquire('t1');
  assert.equal(x2.index, 0, 'load 1 ≤ min 0 + slack 1: stays');
  const x3 = r.acquire('t1');
  assert.equal(x3.index, 2, 'load 2 > 0 + 1: moves to the least loaded');
  for (const h of [x, y, x2, x3]) h.done();
  assert.deepEqual(r.inFlight(), [0, 0, 0]);
});

test('restoreStopTag closes the open action tag when the server stripped it', () => {
  const stops = ['</search>', '</answer>'];
  assert.equal(restoreStopTag({ text: '<search>X', finishReason: 'stop' }, stops), '<search>X</search>');
  assert.equal(restoreStopTag({ text: '<search>X', finishReason: 'stop', stopReason: '</search>' }, stops), '<search>X</search>');
  assert.equal(restoreStopTag({ text: '<search>a</search> <answer>Y', finishReason: 'stop' }, stops), '<search>a</search> <answer>Y</answer>');
  assert.equal(restoreStopTag({ text: '<search>X', finishReason: 'length' }, stops), '<search>X', 'truncated output is left as is');
});

test('all-sampled masks are shared and frozen only up to a bound: a server choosing every reply length up to 65,536 cannot make the masks kept grow past a few MB', () => {
  const short = allSampled(16);
  assert.equal(allSampled(16), short, 'one mask per length');
  assert.ok(Object.isFrozen(short));
  assert.throws(() => short.push(0), 'a shared mask cannot be changed under another turn');
  const long = allSampled(65_536);
  assert.notEqual(allSampled(65_536), long, 'past the bound, a mask each (not kept)');
  assert.ok(!Object.isFrozen(long) && long.length === 65_536 && long.every((m) => m === 1));
});
