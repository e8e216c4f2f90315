import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, test } from 'node:test';
import OpenAI from 'openai';
import { OpenAIPolicy } from '../../src/policy/openai/index.ts';
import { BOS_ID, LlamaEngine } from '../../src/tinylm/index.ts';
import { tinyPrompt } from '../../src/tinylm/world-text.ts';
import { createRng } from '../../src/util/rng.ts';
import { fixture, writeTemp } from './fixtures.ts';
import { startServe } from '../helpers/run-cli.ts';

const { env, tokenizer, model } = fixture({}, 4);
const file = writeTemp(model, 'tiny.gguf');
let child: ChildProcess;
let baseURL: string;
let reference: LlamaEngine;
let client: OpenAI;

before(async () => {
  ({ child, baseURL } = await startServe(file));
  client = new OpenAI({ baseURL, apiKey: 'EMPTY', maxRetries: 0 });
  reference = await LlamaEngine.load(file, { sequences: 1 });
});

after(async () => {
  child.kill('SIGTERM');
  await reference.dispose();
});

test('models lists the file name', async () => {
  const list = await client.models.list();
  assert.deepEqual(
    list.data.map((m) => m.id),
    ['tiny'],
  );
});

test('completions: text, token ids and logprobs agree with llama.cpp, and a seed reproduces the sample', async () => {
  const prompt = tinyPrompt(env.train[2]!);
  const body = { model: 'tiny', prompt, max_tokens: 24, logprobs: 0, seed: 5, temperature: 1, top_p: 1, return_token_ids: true } as const;
  const r = (await client.completions.create(body as unknown as OpenAI.Completions.CompletionCreateParamsNonStreaming)) as unknown as {
    choices: Array<{
      text: string;
      finish_reason: string;
      token_ids: number[];
      prompt_token_ids: number[];
      logprobs: { tokens: string[]; token_logprobs: number[] };
    }>;
    usage: { completion_tokens: number; prompt_tokens: number };
  };
  const c = r.choices[0]!;
  assert.deepEqual(c.prompt_token_ids, [BOS_ID, ...tokenizer.encode(prompt)], 'BOS + the same tokens as the project tokenizer');
  assert.equal(c.token_ids.length, r.usage.completion_tokens);
  assert.equal(c.logprobs.token_logprobs.length, c.token_ids.length);
  assert.equal(c.logprobs.tokens.join(''), c.text);
  assert.equal(tokenizer.decode(c.token_ids), c.text);
  const scored = await reference.score([...c.prompt_token_ids, ...c.token_ids]);
  scored.logprobs.slice(c.prompt_token_ids.length).forEach((l, i) => assert.ok(Math.abs(l - c.logprobs.token_logprobs[i]!) < 1e-4, `token ${i}`));
  const again = (await client.completions.create(body as unknown as OpenAI.Completions.CompletionCreateParamsNonStreaming)) as unknown as typeof r;
  assert.deepEqual(again.choices[0]!.token_ids, c.token_ids);
  // A token-id prompt continues exactly from those ids.
  const ids = (await client.completions.create({
    ...body,
    prompt: c.prompt_token_ids,
  } as unknown as OpenAI.Completions.CompletionCreateParamsNonStreaming)) as unknown as typeof r;
  assert.deepEqual(ids.choices[0]!.token_ids, c.token_ids);
});

test('completions: a stop string ends the text (cut) and include_stop_str_in_output keeps it', async () => {
  const prompt = tinyPrompt(env.train[3]!);
  const base = { model: 'tiny', prompt, max_tokens: 40, seed: 9, return_token_ids: true } as const;
  const free = (await client.completions.create(base as unknown as OpenAI.Completions.CompletionCreateParamsNonStreaming)).choices[0]!;
  const stop = free.text.slice(3, 5); // two characters the model is known to write
  const cut = (await client.completions.create({ ...base, stop: [stop] } as unknown as OpenAI.Completions.CompletionCreateParamsNonStreaming)).choices[0]!;
  assert.equal(cut.finish_reason, 'stop');
  assert.equal(cut.text, free.text.slice(0, free.text.indexOf(stop)));
  const kept = (
    await client.completions.create({
      ...base,
      stop: [stop],
      include_stop_str_in_output: true,
    } as unknown as OpenAI.Completions.CompletionCreateParamsNonStreaming)
  ).choices[0]!;
  assert.equal(kept.text, cut.text + stop);
});

test('chat: message content with per-token logprobs', async () => {
  const r = await client.chat.completions.create({
    model: 'tiny',
    messages: [{ role: 'user', content: env.train[0]!.question }],
    max_tokens: 16,
    logprobs: true,
    seed: 3,
  });
  const c = r.choices[0]!;
  assert.equal(typeof c.message.content, 'string');
  assert.equal(c.logprobs!.content!.length, r.usage!.completion_tokens);
  assert.equal(c.logprobs!.content!.map((t) => t.token).join(''), c.message.content);
  assert.ok(c.logprobs!.content!.every((t) => t.logprob <= 0));
});

test('a bad request is a 400 with an OpenAI error body', async () => {
  await assert.rejects(
    client.completions.create({ model: 'tiny', prompt: 'x', max_tokens: -3 }),
    (e: unknown) => e instanceof OpenAI.BadRequestError && /max_tokens/.test(e.message),
  );
});

test("the rollout engine's OpenAI policy gets token-exact spans from trace-rl serve", async () => {
  const policy = new OpenAIPolicy({ baseURLs: [baseURL], model: 'tiny', extras: 'vllm' });
  const prompt = env.train[5]!;
  const out = await policy.act({ prompt, rendered: tinyPrompt(prompt), turns: [], rng: createRng(1), maxTokens: 20 });
  assert.ok(out.tokens, 'token span present');
  assert.equal(out.tokens.ids.length, out.tokens.logprobs.length);
  assert.ok(out.tokens.mask.every((m) => m === 1));
  assert.ok(tokenizer.decode(out.tokens.ids).startsWith(out.text), 'the ids spell the turn text');
  assert.equal(
    out.logprob,
    out.tokens.logprobs.reduce((a, b) => a + b, 0),
  );
});
