/**
 * The OpenAI-compatible policy's promptFit (what training, eval and diagnose refuse a too-long task
 * by): against `trace-rl serve` (llama.cpp, the project's tiny GGUF) the context is what the server
 * lists at /v1/models and the tokens are what the server itself counts when the prompt is sent; over
 * two servers the smaller context wins. llama.cpp's own server (its context at /props) and a hosted
 * API (no context, no /tokenize) are stand-ins: llama.cpp's `llama-server` binary is not among the
 * project's dependencies (node-llama-cpp bundles the library, not the server), and a hosted API
 * cannot run here. A hostile answer (too deep, too large) says nothing rather than crash.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OpenAIPolicy } from '../../src/policy/index.ts';
import { LlamaEngine } from '../../src/tinylm/index.ts';
import { serveOpenAI } from '../../src/tinylm/openai-server.ts';
import { loadTranscript } from '../../src/tokens/index.ts';
import { fixture, writeTemp } from '../tinylm/fixtures.ts';

const tiny = fixture({ context: 512 });
const closers: Array<() => Promise<void>> = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

/** `trace-rl serve`'s app on a port, in front of the tiny GGUF with llama.cpp's context `context`. */
async function served(context: number): Promise<string> {
  const engine = await LlamaEngine.load(writeTemp(fixture({ context }).model, `ctx-${context}.gguf`), { sequences: 1 });
  const server = await serveOpenAI(engine, { modelName: 'tiny', port: 0 });
  closers.push(
    () => server.close(),
    () => engine.dispose(),
  );
  return `${server.url}/v1`;
}

/** A plain HTTP server answering each path with `routes[path]` (status and JSON or raw text); anything else 404. */
async function standIn(routes: Record<string, { status?: number; body: unknown; raw?: boolean }>): Promise<{ url: string; asked: string[] }> {
  const asked: string[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on('end', () => {
      asked.push(`${req.method} ${req.url}`);
      const r = routes[req.url ?? ''];
      if (!r) return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
      res.writeHead(r.status ?? 200, { 'content-type': 'application/json' }).end(r.raw ? String(r.body) : JSON.stringify(r.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, asked };
}

const prompt = tiny.env.test[0]!;
const rendered = tiny.env.render(prompt);
const long = `${rendered} ${tiny.env.train
  .slice(0, 20)
  .map((p) => p.question)
  .join(' ')}`;

/** The prompt tokens trace-rl serve counts when the text is sent as a completions prompt (usage.prompt_tokens). */
async function promptTokensSent(url: string, text: string): Promise<number> {
  const res = await fetch(`${url}/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'tiny', prompt: text, max_tokens: 1, temperature: 0 }),
  });
  assert.equal(res.status, 200, await res.clone().text());
  return ((await res.json()) as { usage: { prompt_tokens: number } }).usage.prompt_tokens;
}

test('trace-rl serve: the context its /v1/models lists, the tokens it counts for the prompt sent; tokens mode counts the same ids', async () => {
  const url = await served(512);
  const models = (await (await fetch(`${url}/models`)).json()) as { data: Array<{ id: string; max_model_len: number }> };
  assert.deepEqual(
    models.data.map((m) => [m.id, m.max_model_len]),
    [['tiny', 512]],
    'listed as vLLM lists it',
  );
  const completions = new OpenAIPolicy({ baseURLs: [url], model: 'tiny' });
  const fit = await completions.promptFit(prompt, rendered);
  assert.deepEqual(fit, { tokens: await promptTokensSent(url, rendered), context: 512 });
  const longFit = await completions.promptFit(prompt, long);
  assert.equal(longFit?.tokens, await promptTokensSent(url, long));
  assert.ok(longFit!.tokens > fit!.tokens + 100, `${longFit!.tokens} vs ${fit!.tokens}`);
  // Token mode sends the transcript's ids (the server's own tokenizer here): the same count.
  const transcript = await loadTranscript('server', { serverURL: url });
  const tokens = new OpenAIPolicy({ baseURLs: [url], model: 'tiny', mode: 'tokens', transcript });
  assert.deepEqual(await tokens.promptFit(prompt, rendered), fit);
  assert.equal(transcript.promptIds(rendered).length, fit!.tokens);
});

test('over several servers the smallest context wins; chat mode counts the messages’ text (a lower bound, system message included)', async () => {
  const [big, small] = await Promise.all([served(512), served(384)]);
  const policy = new OpenAIPolicy({ baseURLs: [big, small], model: 'tiny' });
  assert.equal((await policy.promptFit(prompt, rendered))?.context, 384);
  const plain = (await policy.promptFit(prompt, rendered))!.tokens;
  const chat = new OpenAIPolicy({ baseURLs: [big], model: 'tiny', mode: 'chat', system: 'Answer with one word.' });
  const withSystem = (await chat.promptFit(prompt, rendered))!.tokens;
  assert.ok(withSystem > plain, `${withSystem} > ${plain}`);
});

test('llama.cpp’s server (stand-in): the context from /props default_generation_settings.n_ctx, the tokens from /tokenize', async () => {
  // As llama-server answers: /v1/models without max_model_len, /props with the slot's context, /tokenize with ids.
  const llama = await standIn({
    '/v1/models': { body: { object: 'list', data: [{ id: 'm.gguf', object: 'model', meta: { n_ctx_train: 32768 } }] } },
    '/props': { body: { default_generation_settings: { n_ctx: 4096, params: {} }, total_slots: 1, chat_template: 'x'.repeat(20_000) } },
    '/tokenize': { body: { tokens: [1, 2, 3, 4, 5, 6, 7] } },
  });
  const policy = new OpenAIPolicy({ baseURLs: [llama.url], model: 'm.gguf' });
  assert.deepEqual(await policy.promptFit(prompt, rendered), { tokens: 7, context: 4096 });
  assert.deepEqual(llama.asked, ['GET /v1/models', 'GET /props', 'POST /tokenize']);
});

test('a server that reports no context, or counts no tokens, is not asked: the task is kept, never refused on a guess', async () => {
  // A hosted API: /v1/models without a context, no /props, no /tokenize.
  const hosted = await standIn({ '/v1/models': { body: { object: 'list', data: [{ id: 'gpt', object: 'model' }] } } });
  assert.equal(await new OpenAIPolicy({ baseURLs: [hosted.url], model: 'gpt' }).promptFit(prompt, rendered), undefined);
  // A context but no /tokenize: the route is asked once, then no more.
  const noTokenize = await standIn({ '/v1/models': { body: { data: [{ id: 'm', max_model_len: 2048 }] } } });
  const policy = new OpenAIPolicy({ baseURLs: [noTokenize.url], model: 'm' });
  assert.equal(await policy.promptFit(prompt, rendered), undefined);
  assert.equal(await policy.promptFit(prompt, long), undefined);
  assert.deepEqual(noTokenize.asked, ['GET /v1/models', 'POST /tokenize']);
  // An unreachable server reports nothing either.
  assert.equal(await new OpenAIPolicy({ baseURLs: ['http://127.0.0.1:9/v1'], model: 'm' }).promptFit(prompt, rendered), undefined);
});

test('hostile answers say nothing: nested past the bound, larger than the bound, a context that is not a positive integer', async () => {
  const deep = await standIn({
    // A context that reads well beside a value nested 10,000 deep: the whole answer is refused unread.
    '/v1/models': { body: `{"data":[{"id":"m","max_model_len":64,"x":${'['.repeat(10_000)}${']'.repeat(10_000)}}]}`, raw: true },
    '/props': { body: { default_generation_settings: { n_ctx: -5 } } },
    '/tokenize': { body: { tokens: [1] } },
  });
  assert.equal(await new OpenAIPolicy({ baseURLs: [deep.url], model: 'm' }).promptFit(prompt, rendered), undefined);
  const huge = await standIn({
    '/v1/models': { body: { data: [{ id: 'm', max_model_len: 64, pad: 'x'.repeat(2 << 20) }] } },
    '/props': { body: { default_generation_settings: { n_ctx: 1.5 } } },
  });
  assert.equal(await new OpenAIPolicy({ baseURLs: [huge.url], model: 'm' }).promptFit(prompt, rendered), undefined);
  // A /tokenize answer past the policy's response ceiling is no count.
  const bigTokens = await standIn({
    '/v1/models': { body: { data: [{ id: 'm', max_model_len: 64 }] } },
    '/tokenize': { body: { tokens: Array.from({ length: 5000 }, (_, i) => i) } },
  });
  assert.equal(await new OpenAIPolicy({ baseURLs: [bigTokens.url], model: 'm', maxResponseBytes: 1000 }).promptFit(prompt, rendered), undefined);
});
