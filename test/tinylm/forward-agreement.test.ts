import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { formatInformation } from '../../src/env/search/search-r1.ts';
import { BOS_ID, LlamaEngine, type LlamaConfig, type LlamaModel } from '../../src/tinylm/index.ts';
import { disposeConsts, forwardConsts, gridArrays, logits, pack, toParams, tokenLogprobs } from '../../src/tinylm/forward.ts';
import { tinyPrompt, turnText } from '../../src/tinylm/world-text.ts';
import { initJax } from '../../src/util/jax.ts';
import { fixture, writeTemp } from './fixtures.ts';

before(async () => {
  await initJax();
});

/**
 * The trainer's log π(t_{i+1} | t_{≤i}) for each sequence, all packed into `rows` rows of T positions
 * (one row: the sequences share it, attention kept block-diagonal).
 */
function jaxLogprobs(model: LlamaModel, seqs: number[][], T: number, rows = 1, config: LlamaConfig = model.config): Float32Array[] {
  const lengths = seqs.map((s) => s.length - 1);
  const [grid] = pack(seqs, lengths, { rowLengths: [T], gridTokens: rows * T });
  assert.equal(grid!.slots.length, seqs.length, 'every sequence fits the grid');
  const k = forwardConsts(config);
  const [ids, targets, pos, start] = gridArrays(grid!);
  const lp = tokenLogprobs(toParams(model.weights, config), ids, targets, pos, start, k, config).dataSync() as Float32Array;
  disposeConsts(k);
  const out: Float32Array[] = [];
  for (const s of [...grid!.slots].sort((a, b) => a.index - b.index)) out.push(lp.slice(s.row * T + s.offset, s.row * T + s.offset + s.length));
  return out;
}

/** A prompt, a search and its observation: the shape of a rollout's sequence. */
function sequence(question: number, first: number, length: number): number[] {
  const { env, tokenizer } = fixture();
  const text = tinyPrompt(env.train[question]!) + turnText({ type: 'search', input: 'Selost' }) + formatInformation(env.world.passages.slice(first, first + 6));
  return [BOS_ID, ...tokenizer.encode(text)].slice(0, length);
}

const maxDiff = (a: ArrayLike<number>, b: ArrayLike<number>, offset = 0) => {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i + offset]!));
  return m;
};

const shapes: Array<Partial<LlamaConfig>> = [{}, { dim: 64, heads: 4, ffn: 96, ropeBase: 500, eps: 1e-6 }, { dim: 128, layers: 4, heads: 4, ffn: 256 }];
for (const overrides of shapes) {
  test(`jax-js token log-probabilities match llama.cpp's on the same weights, alone and packed (${JSON.stringify(overrides)})`, async () => {
    // σ ∝ 1/√dim keeps the random model's logits at the same scale across widths (σ = 0.3 at d64).
    const { model } = fixture(overrides, 5, 0.3 * Math.sqrt(64 / (overrides.dim ?? 64)));
    const long = sequence(4, 20, 240);
    const engine = await LlamaEngine.load(writeTemp(model), { sequences: 1 });
    try {
      const ref = await engine.score(long, { distributions: true });
      const [alone] = jaxLogprobs(model, [long], 256);
      const maxToken = maxDiff(alone!, ref.logprobs, 1);
      // Full next-token distributions at a few positions, as log-probabilities of every token.
      const T = 256;
      const [grid] = pack([long], [long.length - 1], { rowLengths: [T], gridTokens: T });
      const k = forwardConsts(model.config);
      const [ids, , pos, start] = gridArrays(grid!);
      const z = logits(toParams(model.weights, model.config), ids, pos, start, k, model.config).dataSync() as Float32Array;
      disposeConsts(k);
      let maxDist = 0;
      for (const at of [0, 50, long.length - 2]) {
        const row = z.subarray(at * model.config.vocab, (at + 1) * model.config.vocab);
        const m = Math.max(...row);
        const lse = m + Math.log(row.reduce((s, x) => s + Math.exp(x - m), 0));
        const dist = ref.distributions![at]!;
        for (let v = 0; v < row.length; v++) if (dist[v]! > 1e-6) maxDist = Math.max(maxDist, Math.abs(row[v]! - lse - Math.log(dist[v]!)));
      }
      // Packed: three sequences share one row of 512; each must get exactly its numbers alone and llama.cpp's.
      const others = [sequence(9, 40, 150), sequence(17, 60, 90)];
      const packed = jaxLogprobs(model, [long, ...others], 512);
      let maxPackedVsAlone = maxDiff(packed[0]!, alone!);
      let maxPacked = maxDiff(packed[0]!, ref.logprobs, 1);
      for (const [i, s] of others.entries()) {
        const r = await engine.score(s);
        const [solo] = jaxLogprobs(model, [s], 256);
        maxPackedVsAlone = Math.max(maxPackedVsAlone, maxDiff(packed[i + 1]!, solo!));
        maxPacked = Math.max(maxPacked, maxDiff(packed[i + 1]!, r.logprobs, 1));
      }
      console.log(
        `max |Δ log π| vs llama.cpp over ${long.length - 1} tokens: ${maxToken.toExponential(2)}; full distributions: ${maxDist.toExponential(2)}; packed row (3 sequences) vs llama.cpp: ${maxPacked.toExponential(2)}; packed vs alone: ${maxPackedVsAlone.toExponential(2)}`,
      );
      assert.ok(maxToken < 1e-4, `max token difference ${maxToken}`);
      assert.ok(maxDist < 1e-4, `max distribution difference ${maxDist}`);
      assert.ok(maxPacked < 1e-4, `max packed difference ${maxPacked}`);
      assert.ok(maxPackedVsAlone < 1e-4, `packed vs alone ${maxPackedVsAlone}`);
      // The comparison is sensitive: a wrong RoPE base in the trainer is far outside the tolerance.
      const [wrong] = jaxLogprobs(model, [long], 256, 1, { ...model.config, ropeBase: model.config.ropeBase * 2 });
      assert.ok(maxDiff(wrong!, ref.logprobs, 1) > 1e-3, 'a wrong rope base is detected');
    } finally {
      await engine.dispose();
    }
  });
}
