/**
 * The embeddings client is tested against a tiny local HTTP server started here on an ephemeral port.
 * It stands in for an OpenAI-compatible `/v1/embeddings` endpoint (vLLM, llama.cpp, OpenAI): no model
 * server can run in the test environment, and what is under test is our client — request shape,
 * batching, caching, response checks — not the quality of a real embedding model. Its vectors are a
 * deterministic function of the text, so results can be checked exactly.
 */
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  callerEmbeddings,
  createFeatures,
  createMlpPredictor,
  EmbeddingNotPreparedError,
  EmbeddingResponseError,
  historyText,
  OpenAIEmbedder,
} from '../../src/predict/index.ts';
import { createRng } from '../../src/util/rng.ts';
import { histories, plantedSample, prompt, turn } from './helpers.ts';

const DIM = 4;
/** The stand-in model: [length/100, has "zebra", words/10, 1]. */
const fakeVector = (text: string) => [text.length / 100, text.includes('zebra') ? 1 : 0, text.split(/\s+/).length / 10, 1];

let server: Server;
let baseURL = '';
const requests: { model: string; input: string[]; encoding_format?: string }[] = [];

before(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/embeddings') {
        res.writeHead(404).end();
        return;
      }
      const parsed = JSON.parse(body) as { model: string; input: string[]; encoding_format?: string };
      requests.push(parsed);
      const dim = parsed.model === 'wrong-size' ? DIM + 1 : DIM;
      const data = parsed.input.map((t, index) => ({ object: 'embedding', index, embedding: fakeVector(t).concat(dim > DIM ? [0] : []) }));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', model: parsed.model, data, usage: { prompt_tokens: 0, total_tokens: 0 } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

after(() => new Promise<void>((resolve) => server.close(() => resolve())));

const hs = [0, 1, 2, 3, 4].map((i) => ({
  prompt: prompt(`p${i}`, `Question ${i}?`),
  turns: i % 2 ? [turn('search', `q${i}`, i === 3 ? 'a zebra here' : 'nothing')] : [],
}));

test('OpenAI-compatible client: batched requests, float vectors, cache, unprepared histories rejected', async () => {
  requests.length = 0;
  const e = new OpenAIEmbedder({ baseURL, model: 'stand-in', dim: DIM, batchSize: 2 });
  assert.throws(() => e.embed(hs[0]), EmbeddingNotPreparedError);
  await e.prepare(hs);
  assert.equal(requests.length, 3, '5 texts in batches of 2');
  assert.deepEqual(
    requests.map((r) => r.input.length),
    [2, 2, 1],
  );
  assert.ok(requests.every((r) => r.model === 'stand-in' && r.encoding_format === 'float'));
  for (const h of hs) assert.deepEqual(Array.from(e.embed(h)), fakeVector(historyText(h)).map(Math.fround));
  await e.prepare(hs.slice(0, 3));
  assert.equal(requests.length, 3, 'cached texts are not fetched again');
});

test('a vector of the wrong length is an error that names the model and the fix', async () => {
  const e = new OpenAIEmbedder({ baseURL, model: 'wrong-size', dim: DIM });
  await assert.rejects(
    e.prepare(hs),
    (err: Error) => err instanceof EmbeddingResponseError && err.message.includes('wrong-size') && err.message.includes('dim'),
  );
});

test('historyText keeps the question and the most recent turns when cut', () => {
  const long = { prompt: prompt('x', 'What?'), turns: Array.from({ length: 50 }, (_, i) => turn('search', `query ${i}`, 'observation text '.repeat(10))) };
  const text = historyText(long, 500);
  assert.ok(text.length <= 500);
  assert.ok(text.startsWith('Question: What?'));
  assert.ok(text.includes('query 49'));
  assert.ok(!text.includes('query 0\n'));
});

test('predictor with endpoint embeddings: prepare, then predict and train; without prepare it throws', async () => {
  const embedder = new OpenAIEmbedder({ baseURL, model: 'stand-in', dim: DIM });
  const mlp = await createMlpPredictor({ features: createFeatures({ hashed: { hashBits: 6 }, embeddings: embedder }), hidden: [8] });
  const rng = createRng(4);
  const samples = Array.from({ length: 60 }, (_, i) => plantedSample(rng, `e${i}`));
  await mlp.prepare(histories(samples));
  mlp.train(samples);
  const p = mlp.predict(histories(samples));
  assert.equal(p.length, 60);
  assert.ok(p.every((x) => x > 0 && x < 1));
  assert.throws(() => mlp.predict([{ prompt: prompt('new', 'never prepared'), turns: [] }]), EmbeddingNotPreparedError);
});

test('caller-supplied vectors need no preparation and reach the network', async () => {
  const features = createFeatures({
    hashed: { hashBits: 4 },
    embeddings: callerEmbeddings({ dim: 1, name: 'zebra-flag', embed: (h) => [h.turns.some((t) => t.observation.includes('zebra')) ? 1 : 0] }),
  });
  assert.equal(features.dim, 16 + 27 + 1);
  const row = features.encode([plantedSample(createRng(1), 'a').history]);
  assert.equal(row.dim, features.dim);
  const mlp = await createMlpPredictor({ features, hidden: [8], seed: 2, lr: 0.01 });
  const rng = createRng(8);
  for (let s = 0; s < 3; s++) mlp.train(Array.from({ length: 200 }, (_, i) => plantedSample(rng, `c${s}-${i}`)));
  const test = Array.from({ length: 100 }, (_, i) => plantedSample(rng, `t${i}`));
  const p = mlp.predict(histories(test));
  const mean = (k: number) => {
    const xs = test.map((s, i) => (s.target === k ? p[i] : NaN)).filter((x) => !Number.isNaN(x));
    return xs.reduce((a, b) => a + b, 0) / xs.length;
  };
  assert.ok(mean(1) - mean(0) > 0.5, `mean prediction on successes ${mean(1)} vs failures ${mean(0)}`);
});
