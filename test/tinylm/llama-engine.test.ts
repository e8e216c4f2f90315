import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { formatInformation } from '../../src/env/search/search-r1.ts';
import { BOS_ID, LlamaEngine } from '../../src/tinylm/index.ts';
import { tinyPrompt, turnText } from '../../src/tinylm/world-text.ts';
import { fixture, writeTemp } from './fixtures.ts';

let engine: LlamaEngine;
const { env, tokenizer, model } = fixture({}, 2);

before(async () => {
  engine = await LlamaEngine.load(writeTemp(model), { sequences: 2 });
});
after(async () => {
  await engine.dispose();
});

test('llama.cpp loads the written GGUF and tokenizes/detokenizes exactly as the project tokenizer', () => {
  const texts = [
    tinyPrompt(env.train[0]!) + turnText({ type: 'search', input: 'Golden River' }),
    formatInformation(env.world.passages.slice(10, 13)),
    'plain words, Zoë and 1987<answer>yes</answer>',
  ];
  for (const s of texts) {
    const ours = tokenizer.encode(s);
    assert.deepEqual([...engine.model.tokenize(s, false)], ours, s);
    assert.equal(engine.model.detokenize(ours as never, false), s);
  }
});

test('generation is reproducible per seed, stops at a stop token, and reports log-probabilities ≤ 0', async () => {
  const prefix = [BOS_ID, ...tokenizer.encode(tinyPrompt(env.train[1]!))];
  const stop = [tokenizer.id('</search>')!, tokenizer.id('</answer>')!];
  const a = await engine.generate(prefix, { maxTokens: 40, stop, seed: 11 });
  const b = await engine.generate(prefix, { maxTokens: 40, stop, seed: 11 });
  const c = await engine.generate(prefix, { maxTokens: 40, stop, seed: 12 });
  // Same tokens; the log-probabilities agree up to float rounding (the second call re-uses the cached prefix).
  assert.deepEqual(a.ids, b.ids);
  a.logprobs.forEach((l, i) => assert.ok(Math.abs(l - b.logprobs[i]!) < 1e-4));
  assert.notDeepEqual(a.ids, c.ids);
  assert.ok(a.ids.length >= 1 && a.ids.length <= 40);
  assert.equal(a.logprobs.length, a.ids.length);
  assert.ok(a.logprobs.every((l) => l <= 0 && Number.isFinite(l)));
  if (a.stop === 'stop_token') assert.ok(stop.includes(a.ids.at(-1)!));
  if (a.stop === 'length') assert.equal(a.ids.length, 40);
  // The sampled tokens' probabilities are llama.cpp's own next-token probabilities.
  const scored = await engine.score([...prefix, ...a.ids]);
  const mine = scored.logprobs.slice(prefix.length);
  for (let i = 0; i < mine.length; i++) assert.ok(Math.abs(mine[i]! - a.logprobs[i]!) < 1e-4, `token ${i}: ${mine[i]} vs ${a.logprobs[i]}`);
});
