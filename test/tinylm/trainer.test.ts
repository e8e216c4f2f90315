import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { formatInformation } from '../../src/env/search/search-r1.ts';
import { initWeights, LmTrainer, trajectorySequence } from '../../src/tinylm/index.ts';
import { tokenDivisor } from '../../src/tinylm/tiny-lm-policy.ts';
import { NonFiniteUpdateError } from '../../src/tinylm/trainer.ts';
import { grow } from '../../src/tinylm/warm-start.ts';
import { createRng } from '../../src/util/rng.ts';
import { initJax } from '../../src/util/jax.ts';
import { fixture } from './fixtures.ts';

before(async () => {
  await initJax();
});

function rows() {
  const { env, tokenizer } = fixture();
  return env.train.slice(0, 3).map((p, i) =>
    trajectorySequence(tokenizer, p, [
      {
        thought: '',
        action: { type: 'search', input: 'x' },
        text: `<think>t${i}</think>\n<search>${p.question.split(' ')[3]}</search>`,
        observation: formatInformation(env.world.passages.slice(i, i + 1)),
      },
      { thought: '', action: { type: 'answer', input: p.answers[0]! }, text: `<answer>${p.answers[0]}</answer>`, observation: '' },
    ]),
  );
}

test('supervised steps on a short batch (3 rows of 4) lower the masked negative log-likelihood', async () => {
  const { model } = fixture();
  const trainer = new LmTrainer(model, { batch: 4 });
  const seqs = rows();
  const nll = () => {
    const lp = trainer.logprobs(seqs);
    let s = 0;
    let n = 0;
    seqs.forEach((q, j) =>
      q.mask.forEach((m, i) => {
        if (m === 1) {
          s -= lp[j]![i]!;
          n++;
        }
      }),
    );
    return s / n;
  };
  const start = nll();
  let first = 0;
  for (let k = 0; k < 6; k++) {
    const r = await trainer.step(
      'sft',
      seqs.map((seq) => ({ seq })),
      0.01,
    );
    if (k === 0) first = r.loss;
    assert.equal(
      r.tokens,
      seqs.reduce((a, q) => a + q.mask.reduce((x, y) => x + y, 0), 0),
    );
  }
  assert.ok(Math.abs(first - start) < 1e-3, `the step's reported loss is the masked NLL before it (${first} vs ${start})`);
  assert.ok(nll() < start - 0.5, `NLL ${start} → ${nll()}`);
  assert.equal(trainer.updates, 6);
});

test('a PPO batch whose advantages are all zero takes no step', async () => {
  const { model } = fixture();
  const trainer = new LmTrainer(model, { batch: 4 });
  const seqs = rows();
  const r = await trainer.step(
    'ppo',
    seqs.map((seq) => ({ seq, advantages: seq.ids.map(() => 0) })),
    0.01,
  );
  assert.deepEqual(r, { loss: 0, tokens: 0, clipFraction: 0, approxKl: 0 });
  assert.equal(trainer.updates, 0);
  assert.deepEqual(trainer.weights().output, model.weights.output);
});

test('fit packs the rows into one grid per row length and takes one Adam step per grid', async () => {
  const { model } = fixture();
  const trainer = new LmTrainer(model, { gridTokens: 1024 });
  const seqs = rows();
  const before = trainer.logprobs(seqs);
  const r = await trainer.fit(
    'sft',
    seqs.map((seq) => ({ seq })),
    0.01,
  );
  // Three short sequences of similar length fit one grid of 1024 positions.
  assert.equal(r.steps, 1);
  assert.equal(trainer.updates, 1);
  assert.equal(
    r.tokens,
    seqs.reduce((a, q) => a + q.mask.reduce((x, y) => x + y, 0), 0),
  );
  const after = trainer.logprobs(seqs);
  const mean = (lp: number[][]) => lp.flat().reduce((a, b) => a + b, 0);
  assert.ok(mean(after) > mean(before), 'one step raised the demonstrations’ log-likelihood');
  trainer.dispose();
});

test('grow: the checkpoint inside a deeper, wider-FFN model computes the same log-probabilities', () => {
  const { model } = fixture();
  const config = { ...model.config, layers: model.config.layers + 1, ffn: model.config.ffn * 2 };
  const big = { config, vocab: model.vocab, weights: grow(model, config, initWeights(config, createRng(9))) };
  const seqs = rows();
  const a = new LmTrainer(model).logprobs(seqs);
  const b = new LmTrainer(big).logprobs(seqs);
  let gap = 0;
  a.forEach((row, i) => row.forEach((x, j) => (gap = Math.max(gap, Math.abs(x - b[i]![j]!)))));
  assert.ok(gap < 1e-5, `grown model differs by ${gap}`);
  assert.throws(() => grow(model, { ...config, dim: 64 }, initWeights({ ...config, dim: 64 }, createRng(9))), /cannot grow/);
});

test('fit reports PPO ratio statistics from its own forward pass: the log π each grid had before its step', async () => {
  const { model } = fixture();
  const trainer = new LmTrainer(model, { gridTokens: 1024 });
  const seqs = rows();
  // Old log π: the weights' own (ratio 1 on the first pass), then a pass of large steps moves them.
  const own = trainer.logprobs(seqs);
  const train = seqs.map((seq, j) => ({ seq: { ...seq, logprobs: own[j]! }, advantages: seq.ids.map((_, t) => (seq.mask[t] === 1 ? (j % 2 ? -1 : 1) : 0)) }));
  const first = await trainer.fit('ppo', train, 0.05, { clip: 0.2 });
  assert.equal(first.steps, 1);
  assert.ok(Math.abs(first.approxKl) < 1e-6 && first.clipFraction === 0, `before any step the ratio is 1 (KL ${first.approxKl})`);
  // The second pass's statistics are those of the weights after the first step, as logprobs() gives them.
  const moved = trainer.logprobs(seqs);
  let kl = 0;
  let clipped = 0;
  let n = 0;
  train.forEach((r, j) =>
    r.seq.mask.forEach((m, t) => {
      if (m !== 1) return;
      const d = moved[j]![t]! - own[j]![t]!;
      kl -= d;
      if (Math.exp(d) < 0.8 || Math.exp(d) > 1.2) clipped++;
      n++;
    }),
  );
  const second = await trainer.fit('ppo', train, 0.05, { clip: 0.2 });
  assert.ok(Math.abs(kl / n) > 1e-3, `the first step moved the policy (KL ${kl / n})`);
  assert.ok(Math.abs(second.approxKl - kl / n) < 1e-5, `KL from the pass ${second.approxKl} vs from logprobs() ${kl / n}`);
  assert.equal(second.clipFraction, clipped / n);
  trainer.dispose();
});

test('normalise: the PPO loss is the same sum over trained tokens divided by D, for every form of D', async () => {
  const { model } = fixture();
  const trainer = new LmTrainer(model, { gridTokens: 1024 });
  const seqs = rows();
  const own = trainer.logprobs(seqs);
  // Row 2 is a dead group's sample: no advantage anywhere, so only batch's D counts its tokens.
  const train = seqs.map((seq, j) => ({
    seq: { ...seq, logprobs: own[j]! },
    advantages: seq.ids.map((_, t) => (seq.mask[t] === 1 && j < 2 ? (j % 2 ? -0.5 : 1) : 0)),
  }));
  // Move the weights off π_old first, so the ratios (and clipping) are not all 1.
  await trainer.fit('ppo', train, 0.05, { clip: 0.2 });
  const generated = seqs.reduce((n, q) => n + q.mask.reduce((a, m) => a + m, 0), 0);
  const trainedTokens = seqs.slice(0, 2).reduce((n, q) => n + q.mask.reduce((a, m) => a + m, 0), 0);
  assert.equal(tokenDivisor('turns', 3, train), undefined);
  assert.equal(tokenDivisor('samples', 3, train), 3);
  assert.equal(tokenDivisor('batch', 3, train), generated);
  // A step of size 0 reports the loss at the current weights without moving them.
  const at = async (divisor?: number) => (await trainer.step('ppo', train, 0, 0.2, divisor)).loss;
  const mean = await at();
  assert.ok(Math.abs(mean) > 1e-4, `a loss to compare (${mean})`);
  for (const D of [3, generated]) {
    const loss = await at(D);
    assert.ok(Math.abs(loss * D - mean * trainedTokens) < 1e-4 * Math.abs(mean * trainedTokens), `D = ${D}: ${loss} × D vs ${mean} × ${trainedTokens}`);
  }
  await assert.rejects(() => trainer.step('ppo', train, 0, 0.2, 0), /divisor must be positive/);
  trainer.dispose();
});

test('a step whose new weights would not be finite is refused: weights, log-probabilities and the step count stay as they were', async () => {
  const { model } = fixture();
  const trainer = new LmTrainer(model);
  const seqs = rows();
  const before = trainer.logprobs(seqs);
  // Adam moves each weight by about the learning rate: 1e30 squared overflows float32.
  await assert.rejects(
    trainer.step(
      'sft',
      seqs.map((seq) => ({ seq })),
      1e30,
    ),
    NonFiniteUpdateError,
  );
  assert.equal(trainer.updates, 0);
  assert.deepEqual(trainer.logprobs(seqs), before);
  // The trainer still steps afterwards.
  await trainer.step(
    'sft',
    seqs.map((seq) => ({ seq })),
    0.01,
  );
  assert.equal(trainer.updates, 1);
  trainer.dispose();
});
