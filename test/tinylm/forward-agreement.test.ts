import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { formatInformation } from '../../src/env/search-r1.ts';
import { BOS_ID, LlamaEngine, type LlamaConfig, type LlamaModel } from '../../src/tinylm/index.ts';
import { forwardConsts, logits, oneHot, toParams, tokenLogprobs } from '../../src/tinylm/forward.ts';
import { tinyPrompt, turnText } from '../../src/tinylm/world-text.ts';
import { initJax } from '../../src/util/jax.ts';
import { fixture, writeTemp } from './fixtures.ts';

before(async () => {
  await initJax();
});

/** The trainer's log π(t_{i+1} | t_{≤i}) for one sequence. */
function jaxLogprobs(model: LlamaModel, ids: number[], config: LlamaConfig = model.config): Float32Array {
  const T = ids.length - 1;
  const V = config.vocab;
  const lp = tokenLogprobs(toParams(model.weights, config), oneHot([ids.slice(0, -1)], T, V), oneHot([ids.slice(1)], T, V), forwardConsts(config, T), config);
  return Float32Array.from(lp.dataSync() as Float32Array);
}

function sequence(): number[] {
  const { env, tokenizer } = fixture();
  const text = tinyPrompt(env.train[4]!) + turnText({ type: 'search', input: 'Selost' }) + formatInformation(env.world.passages.slice(20, 26));
  return [BOS_ID, ...tokenizer.encode(text)].slice(0, 240);
}

for (const overrides of [{}, { dim: 64, heads: 4, ffn: 96, ropeBase: 500, eps: 1e-6 }]) {
  test(`jax-js token log-probabilities match llama.cpp's on the same weights (${JSON.stringify(overrides)})`, async () => {
    const { model } = fixture(overrides, 5);
    const ids = sequence();
    const engine = await LlamaEngine.load(writeTemp(model), { sequences: 1 });
    try {
      const ref = await engine.score(ids, { distributions: true });
      const got = jaxLogprobs(model, ids);
      let maxToken = 0;
      for (let i = 0; i + 1 < ids.length; i++) maxToken = Math.max(maxToken, Math.abs(got[i]! - ref.logprobs[i + 1]!));
      // Full next-token distributions at a few positions, as log-probabilities of every token.
      const T = ids.length - 1;
      const all = logits(toParams(model.weights, model.config), oneHot([ids.slice(0, -1)], T, model.config.vocab), forwardConsts(model.config, T), model.config);
      const z = all.dataSync() as Float32Array;
      let maxDist = 0;
      for (const pos of [0, 50, T - 1]) {
        const row = z.subarray(pos * model.config.vocab, (pos + 1) * model.config.vocab);
        const m = Math.max(...row);
        const lse = m + Math.log(row.reduce((s, x) => s + Math.exp(x - m), 0));
        const dist = ref.distributions![pos]!;
        for (let v = 0; v < row.length; v++) if (dist[v]! > 1e-6) maxDist = Math.max(maxDist, Math.abs(row[v]! - lse - Math.log(dist[v]!)));
      }
      console.log(`max |Δ log π| over ${T} tokens: ${maxToken.toExponential(2)}; over full distributions: ${maxDist.toExponential(2)}`);
      assert.ok(maxToken < 1e-4, `max token difference ${maxToken}`);
      assert.ok(maxDist < 1e-4, `max distribution difference ${maxDist}`);
      // The comparison is sensitive: a wrong RoPE base in the trainer is far outside the tolerance.
      const wrong = jaxLogprobs(model, ids, { ...model.config, ropeBase: model.config.ropeBase * 2 });
      let maxWrong = 0;
      for (let i = 0; i + 1 < ids.length; i++) maxWrong = Math.max(maxWrong, Math.abs(wrong[i]! - ref.logprobs[i + 1]!));
      assert.ok(maxWrong > 1e-3, `wrong rope base still within ${maxWrong}`);
    } finally {
      await engine.dispose();
    }
  });
}
