/**
 * OpenAIPolicy's token mode against the scripted stand-in server (ids = code points): a server that
 * cuts the stop tag anyway gets the tag appended with mask 0 (never trained on), and a server that
 * refuses id prompts is asked in text, remembered, and its turns are marked not token-exact.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEstimator } from '../../src/advantage/index.ts';
import { WorldEnv } from '../../src/env/index.ts';
import { buildBatch } from '../../src/export/index.ts';
import { OpenAIPolicy } from '../../src/policy/index.ts';
import type { PolicyOutput } from '../../src/policy/types.ts';
import { codepointTokenizer, Transcript } from '../../src/tokens/index.ts';
import { addTurn, createTree, endTrajectory } from '../../src/tree/index.ts';
import { createRng } from '../../src/util/rng.ts';
import { startStandIn } from './openai-stand-in.ts';
import { rawBodyServer, REQUEST_VARIANTS } from './raw-bodies.ts';

const world = new WorldEnv({ seed: 7, questions: 60 });
const prompt = world.test[0]!;
const transcript = new Transcript(codepointTokenizer);
const ids = (s: string) => codepointTokenizer.encode(s);

/** A search turn made of a call's answer (its text and token record), with a one-document observation. */
const recordedTurn = (out: PolicyOutput, query: string) => ({
  thought: '',
  action: { type: 'search' as const, input: query },
  observation: '\n<information>Doc 1</information>\n',
  text: out.text,
  tokens: out.tokens!,
});

test('token mode: a stop tag the server cut is appended with mask 0 and log-probability 0; the prompt went as ids', async () => {
  const server = await startStandIn({ cutsStop: true });
  try {
    const policy = new OpenAIPolicy({ baseURLs: [server.url], model: 'stand-in', mode: 'tokens', transcript });
    const out = await policy.act({ prompt, rendered: world.render(prompt), turns: [], rng: createRng(1), maxTokens: 200 });
    assert.deepEqual(server.bodies[0]!.prompt, ids(world.render(prompt)), 'the prompt is sent as ids');
    assert.equal(server.bodies[0]!.include_stop_str_in_output, true);
    assert.ok(out.text.endsWith('</search>'), out.text);
    const span = out.tokens!;
    assert.equal(span.prompt, 'ids');
    const tag = ids('</search>');
    assert.deepEqual(span.ids.slice(-tag.length), tag);
    assert.deepEqual(
      span.mask.slice(-tag.length),
      tag.map(() => 0),
      'the appended tag was not sampled',
    );
    assert.deepEqual(
      span.logprobs.slice(-tag.length),
      tag.map(() => 0),
    );
    assert.ok(span.mask.slice(0, -tag.length).every((m) => m === 1));
    assert.equal(codepointTokenizer.decode(span.ids), out.text);

    // Export keeps the mask: the tag's ids are in the row with mask 0, and the row is token-exact.
    const tree = createTree(prompt.id, prompt.question);
    const node = addTurn(
      tree,
      prompt.id,
      { thought: '', action: { type: 'search', input: 'x' }, observation: '', text: out.text, tokens: span },
      { origin: 'bare', slot: 0 },
    );
    endTrajectory(tree, node.id, 'answer', 1, 1);
    const [row] = buildBatch([tree], { step: 0, estimator: createEstimator('grpo'), tokenizer: codepointTokenizer, render: () => world.render(prompt) }).rows;
    assert.deepEqual(
      row!.response_mask.slice(-tag.length),
      tag.map(() => 0),
    );
    assert.equal(row!.token_exact, true);
  } finally {
    await server.close();
  }
});

test('token mode: a server that refuses id prompts is asked in text, once detected; its turns are not token-exact', async () => {
  const server = await startStandIn({ fault: (_n, body) => (Array.isArray(body.prompt) ? 'error400' : 'ok') });
  try {
    const policy = new OpenAIPolicy({ baseURLs: [server.url], model: 'stand-in', mode: 'tokens', transcript });
    const first = await policy.act({ prompt, rendered: world.render(prompt), turns: [], rng: createRng(1), maxTokens: 200 });
    assert.equal(first.tokens!.prompt, 'text');
    assert.equal(server.bodies.length, 2, 'ids refused, then the same request as text');
    assert.ok(Array.isArray(server.bodies[0]!.prompt));
    assert.equal(server.bodies[1]!.prompt, world.render(prompt));
    const turn = recordedTurn(first, 'x');
    await policy.act({ prompt, rendered: world.render(prompt), turns: [turn], rng: createRng(2), maxTokens: 200 });
    assert.equal(server.bodies.length, 3, 'the server is remembered as text-only');
    assert.equal(server.bodies[2]!.prompt, world.render(prompt) + first.text + turn.observation);

    const tree = createTree(prompt.id, prompt.question);
    const node = addTurn(tree, prompt.id, turn, { origin: 'bare', slot: 0 });
    endTrajectory(tree, node.id, 'answer', 0, 0);
    const [row] = buildBatch([tree], { step: 0, estimator: createEstimator('grpo'), tokenizer: codepointTokenizer, render: () => world.render(prompt) }).rows;
    assert.equal(row!.token_exact, false, 'the export says the row came from a text prompt');
  } finally {
    await server.close();
  }
});

test("token mode: the prompt's ids are the prompt's, each turn's record (or its text's encoding) and each observation's, in order, call after call", async () => {
  const server = await startStandIn({});
  try {
    const policy = new OpenAIPolicy({ baseURLs: [server.url], model: 'stand-in', mode: 'tokens', transcript });
    const rendered = world.render(prompt);
    const call = (turns: Parameters<typeof policy.act>[0]['turns']) => policy.act({ prompt, rendered, turns, rng: createRng(turns.length), maxTokens: 200 });
    const first = await call([]);
    const recorded = recordedTurn(first, 'a');
    const textOnly = {
      thought: 'hm',
      action: { type: 'search' as const, input: 'b' },
      observation: '\n<information>Doc 2</information>\n',
      text: '<search>b</search>',
    };
    const expected = (turns: readonly { text: string; observation: string; tokens?: { ids: number[] } }[]) => [
      ...ids(rendered),
      ...turns.flatMap((t) => [...(t.tokens ? t.tokens.ids : ids(t.text)), ...ids(t.observation)]),
    ];
    await call([recorded]);
    await call([recorded, textOnly]);
    await call([recorded, textOnly]); // the same lists again: written from what the first call kept
    assert.deepEqual(server.bodies[1]!.prompt, expected([recorded]));
    assert.deepEqual(server.bodies[2]!.prompt, expected([recorded, textOnly]));
    assert.deepEqual(server.bodies[3]!.prompt, expected([recorded, textOnly]));
    // A record that grows after its ids were sent is sent as it is now, not as it was.
    recorded.tokens.ids.push(...ids('!'));
    await call([recorded]);
    assert.deepEqual(server.bodies[4]!.prompt, expected([recorded]));
    assert.equal(server.bodies[4]!.return_token_ids, true, 'the other fields still go with the ids');
    // So does one whose observation changed after its ids were written.
    recorded.observation = '\n<information>Doc 3</information>\n';
    await call([recorded]);
    assert.deepEqual(server.bodies[5]!.prompt, expected([recorded]));
  } finally {
    await server.close();
  }
});

test('token mode sends exactly the text of JSON.stringify({ ...request(ctx), token fields, prompt }), whatever the options; a server that refuses ids gets the same body with the text', async () => {
  // The raw text is checked (token mode writes it without a body object); an id prompt is refused while
  // `refuse` is set, as a server without id prompts does.
  let refuse = false;
  const { url, raw, close } = await rawBodyServer((text) =>
    refuse && Array.isArray((JSON.parse(text) as { prompt: unknown }).prompt) ? '{"error":{"message":"prompt must be a string"}}' : undefined,
  );
  try {
    const rendered = world.render(prompt);
    const recorded = {
      thought: '',
      action: { type: 'search' as const, input: 'a' },
      observation: '\n<information>a\u0001b</information>\n',
      text: '<search>a</search>',
    };
    const record = { ids: ids(recorded.text), logprobs: ids(recorded.text).map(() => -1), mask: ids(recorded.text).map(() => 1), prompt: 'ids' as const };
    const turns = [
      { ...recorded, tokens: record },
      { thought: 't', action: { type: 'search' as const, input: 'Q "x"' }, observation: '', text: '<search>Q "x"</search>' },
    ];
    const promptIds = [...ids(rendered), ...record.ids, ...ids(recorded.observation), ...ids(turns[1]!.text)];
    const expected = (policy: OpenAIPolicy, ctx: Parameters<OpenAIPolicy['request']>[0], prompt: unknown) =>
      JSON.stringify({ ...policy.request(ctx), return_token_ids: true, include_stop_str_in_output: true, no_stop_trim: true, prompt });
    for (const options of REQUEST_VARIANTS)
      for (const greedy of [false, true])
        for (const maxTokens of [64, 128]) {
          const label = JSON.stringify({ options, greedy, maxTokens });
          const policy = new OpenAIPolicy({ baseURLs: [url], model: 'm "q"', mode: 'tokens', transcript, ...options });
          const ctx = { prompt, rendered, turns, maxTokens, greedy, trajectoryId: 'q/0' };
          await policy.act({ ...ctx, rng: createRng(3).fork('c') });
          await policy.act({ ...ctx, rng: createRng(4).fork('c') }); // the second call of a kind reuses its cached frame
          assert.equal(raw.at(-2), expected(policy, { ...ctx, rng: createRng(3).fork('c') }, promptIds), label);
          assert.equal(raw.at(-1), expected(policy, { ...ctx, rng: createRng(4).fork('c') }, promptIds), label);
          // Refused as ids: the same fields (the same seed) with the prompt as text, then text from then on.
          refuse = true;
          await policy.act({ ...ctx, rng: createRng(5).fork('c') });
          refuse = false;
          const text = rendered + turns.map((t) => t.text + t.observation).join('');
          assert.equal(raw.at(-2), expected(policy, { ...ctx, rng: createRng(5).fork('c') }, promptIds), label);
          assert.equal(raw.at(-1), expected(policy, { ...ctx, rng: createRng(5).fork('c') }, text), label);
        }
  } finally {
    await close();
  }
});
