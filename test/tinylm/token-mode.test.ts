/**
 * Token-in/token-out against a real llama.cpp server (`trace-rl serve`): a three-turn rollout keeps
 * every sampled id, the server's /tokenize and /detokenize agree with the model's tokenizer, a
 * constructed case shows text mode drifting, and /reload swaps weights.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { createEstimator } from '../../src/advantage/index.ts';
import { formatInformation } from '../../src/env/search/search-r1.ts';
import { buildBatch, prepareExport } from '../../src/export/index.ts';
import { OpenAIPolicy } from '../../src/policy/openai/index.ts';
import { LlamaEngine, TAGS } from '../../src/tinylm/index.ts';
import { tinyPrompt } from '../../src/tinylm/world-text.ts';
import { loadTranscript, ServerTokenizer, type Transcript } from '../../src/tokens/index.ts';
import { addTurn, createTree, endTrajectory, type Turn } from '../../src/tree/index.ts';
import { createRng } from '../../src/util/rng.ts';
import { fixture, writeTemp } from './fixtures.ts';
import { CONTROL_TOKEN, controlTokenFile, startServe } from '../helpers/run-cli.ts';

const { env, tokenizer, model } = fixture({}, 4);
const file = writeTemp(model, 'tiny.gguf');
let child: ChildProcess;
let baseURL: string;
let reference: LlamaEngine;
let transcript: Transcript;
/** A recording proxy in front of the server: the exact request bodies and responses the policy exchanged. */
let proxy: Server;
let proxyURL: string;
const exchanges: Array<{ request: Record<string, unknown>; response: Record<string, unknown> }> = [];

before(async () => {
  ({ child, baseURL } = await startServe(file, ['--allow-reload', '--control-token-file', controlTokenFile()]));
  proxy = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString();
    const upstream = await fetch(`${baseURL.replace(/\/v1$/, '')}${req.url}`, {
      method: req.method,
      headers: { 'content-type': 'application/json' },
      body: req.method === 'POST' ? body : undefined,
    });
    const text = await upstream.text();
    if (req.url?.endsWith('/completions')) exchanges.push({ request: JSON.parse(body), response: JSON.parse(text) });
    res.writeHead(upstream.status, { 'content-type': 'application/json' }).end(text);
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  proxyURL = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/v1`;
  reference = await LlamaEngine.load(file, { sequences: 1 });
  transcript = await loadTranscript('server', { serverURL: baseURL });
});

after(async () => {
  child.kill('SIGTERM');
  proxy.close();
  await reference.dispose();
});

test('/tokenize and /detokenize speak vLLM’s and llama.cpp’s fields and agree with the model’s tokenizer', async () => {
  const root = baseURL.replace(/\/v1$/, '');
  const text = 'Question: who founded <search>Alder Bay</search>?';
  const post = async (path: string, body: unknown) =>
    (await fetch(`${root}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json() as Promise<
      Record<string, unknown>
    >;
  const vllm = await post('/tokenize', { model: 'tiny', prompt: text, add_special_tokens: false });
  assert.deepEqual(vllm.tokens, tokenizer.encode(text), 'the server tokenizes like the project tokenizer');
  const llamacpp = await post('/tokenize', { content: text, add_special: true });
  assert.deepEqual(llamacpp.tokens, [tokenizer.bos, ...tokenizer.encode(text)], 'add_special puts BOS first');
  const back = await post('/detokenize', { tokens: vllm.tokens });
  assert.equal(back.prompt, text);
  assert.equal(back.content, text);
  assert.ok(transcript.tokenizer instanceof ServerTokenizer);
  assert.equal(transcript.tokenizer.bos, tokenizer.bos);
});

/** Three turns in token mode: each call's prompt is the previous prompt + the sampled ids + the observation's ids. */
test('token mode: a three-turn rollout sends ids, keeps every sampled id, and the ids export unchanged with llama.cpp’s log-probabilities', async () => {
  exchanges.length = 0;
  const policy = new OpenAIPolicy({ baseURLs: [proxyURL], model: 'tiny', mode: 'tokens', transcript, stop: ['</search>', '</answer>'] });
  const prompt = env.train[3]!;
  const rendered = tinyPrompt(prompt);
  const turns: Turn[] = [];
  const observations = [formatInformation([env.world.passages[0]!]), formatInformation([env.world.passages[1]!]), ''];
  for (let k = 0; k < 3; k++) {
    const out = await policy.act({ prompt, rendered, turns, rng: createRng(10 + k), maxTokens: 12 });
    assert.ok(out.tokens, `turn ${k}: span`);
    assert.equal(out.tokens.prompt, 'ids');
    assert.ok(out.tokens.ids.length > 0, `turn ${k}: sampled something`);
    assert.ok(
      out.tokens.mask.every((m) => m === 1),
      'with include_stop_str_in_output every id was sampled',
    );
    turns.push({ thought: '', action: { type: 'search', input: '' }, observation: observations[k]!, text: out.text, tokens: out.tokens });
  }
  assert.equal(exchanges.length, 3);
  let expected = [tokenizer.bos, ...tokenizer.encode(rendered)];
  for (let k = 0; k < 3; k++) {
    const { request, response } = exchanges[k]!;
    assert.deepEqual(request.prompt, expected, `call ${k}: the prompt is ids, earlier turns as sampled`);
    const choice = (response.choices as Array<Record<string, unknown>>)[0]!;
    assert.deepEqual(choice.token_ids, turns[k]!.tokens!.ids, `call ${k}: the turn keeps the sampled ids`);
    expected = [...expected, ...turns[k]!.tokens!.ids, ...(observations[k] ? tokenizer.encode(observations[k]!) : [])];
  }

  // The exported row is that sequence, and llama.cpp scoring it reproduces the sampled log-probabilities.
  const tree = createTree(prompt.id, prompt.question);
  let parent = prompt.id;
  for (const t of turns) parent = addTurn(tree, parent, t, { origin: 'bare', slot: 0 }).id;
  endTrajectory(tree, parent, 'answer', 1, 1);
  const options = { tokenizer: transcript.tokenizer, render: () => rendered };
  await prepareExport([tree], options);
  const [row] = buildBatch([tree], { ...options, step: 0, estimator: createEstimator('grpo') }).rows;
  assert.equal(row!.token_exact, true);
  assert.deepEqual([...row!.prompt_ids, ...row!.response_ids], expected);
  const scored = await reference.score(expected);
  let gap = 0;
  row!.response_mask.forEach((m, i) => {
    if (m === 1) gap = Math.max(gap, Math.abs(scored.logprobs[row!.prompt_ids.length + i]! - row!.response_logprobs[i]!));
  });
  assert.ok(gap < 1e-3, `llama.cpp log-probabilities of the exported sequence match the sampled ones (max gap ${gap})`);
});

test('text mode drifts on a constructed turn: ids a model may sample that re-tokenise differently; token mode keeps them', async () => {
  // A word the vocabulary holds as one piece, "sampled" as its byte tokens (the same text).
  const word = tokenizer.pieces.find((p, i) => p.startsWith('\u2581') && p.length > 4 && tokenizer.encode(p.replace('\u2581', ' ')).length === 1 && i > 300)!;
  const text = word.replace('\u2581', ' ');
  const bytes = [...new TextEncoder().encode(text)].map((b) => tokenizer.id(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`)!);
  assert.equal(tokenizer.decode(bytes), text);
  assert.notDeepEqual(bytes, tokenizer.encode(text));
  const prompt = env.train[0]!;
  const rendered = tinyPrompt(prompt);
  const turn: Turn = {
    thought: '',
    action: { type: 'search', input: '' },
    observation: formatInformation([env.world.passages[2]!]),
    text,
    tokens: { ids: bytes, logprobs: bytes.map(() => -1), mask: bytes.map(() => 1), prompt: 'ids' },
  };
  const sent = async (mode: 'tokens' | 'completions') => {
    exchanges.length = 0;
    const policy = new OpenAIPolicy({ baseURLs: [proxyURL], model: 'tiny', mode, transcript, extras: 'vllm' });
    await policy.act({ prompt, rendered, turns: [turn], rng: createRng(1), maxTokens: 4 });
    const choice = (exchanges[0]!.response.choices as Array<Record<string, unknown>>)[0]!;
    return choice.prompt_token_ids as number[];
  };
  const head = [tokenizer.bos, ...tokenizer.encode(rendered)];
  const inTokens = await sent('tokens');
  assert.deepEqual(inTokens.slice(head.length, head.length + bytes.length), bytes, 'token mode: the model sees the ids it sampled');
  const inText = await sent('completions');
  assert.notDeepEqual(inText.slice(head.length, head.length + bytes.length), bytes, 'text mode: the server re-tokenised the turn');
  assert.deepEqual(inText.slice(head.length, head.length + tokenizer.encode(text).length), tokenizer.encode(text));
  assert.equal(tokenizer.decode(inText), tokenizer.decode(inTokens), 'same text, different ids: drift');
});

test('finish_reason length when max_tokens or the context ends generation; /reload swaps the weights', async () => {
  const root = baseURL.replace(/\/v1$/, '');
  const complete = async (prompt: number[], max: number) =>
    (await (
      await fetch(`${baseURL}/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ prompt, max_tokens: max, logprobs: 0, seed: 3, return_token_ids: true }),
      })
    ).json()) as Record<string, any>;
  const ids = [tokenizer.bos, ...tokenizer.encode(tinyPrompt(env.train[1]!))];
  const a = await complete(ids, 3);
  assert.ok(a.choices[0].finish_reason === 'length' || a.choices[0].token_ids.at(-1) === 2);
  // Fill the 512-token context: the server stops at the context's end with finish_reason "length".
  const long = [tokenizer.bos, ...Array.from({ length: 508 }, (_, i) => tokenizer.encode(TAGS[i % 2]!)[0]!)];
  const full = await complete(long, 50);
  assert.ok(full.choices[0].token_ids.length <= 3);
  if (full.choices[0].token_ids.at(-1) !== 2) assert.equal(full.choices[0].finish_reason, 'length');
  const over = await fetch(`${baseURL}/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ prompt: [...long, ...long], max_tokens: 2 }),
  });
  // The server's prompt-token limit (the context length by default; docs/reliability.md) refuses it before generating.
  assert.equal(over.status, 413, 'a prompt longer than the context is refused');
  assert.equal(((await over.json()) as { error: { code: string } }).error.code, 'prompt_too_many_tokens');

  const other = writeTemp(fixture({}, 9).model, 'other.gguf');
  const r = await fetch(`${root}/reload`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${CONTROL_TOKEN}` },
    body: JSON.stringify({ model: other }),
  });
  assert.equal(r.status, 200);
  const b = await complete(ids, 3);
  assert.notDeepEqual(b.choices[0].logprobs.token_logprobs, a.choices[0].logprobs.token_logprobs, 'new weights answer');
  const otherEngine = await LlamaEngine.load(other, { sequences: 1 });
  try {
    const s = await otherEngine.score([...ids, ...b.choices[0].token_ids]);
    const gap = Math.max(...b.choices[0].logprobs.token_logprobs.map((lp: number, i: number) => Math.abs(lp - s.logprobs[ids.length + i]!)));
    assert.ok(gap < 1e-3, `served log-probabilities are the reloaded model's (gap ${gap})`);
  } finally {
    await otherEngine.dispose();
  }
});
