import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { formatInformation } from '../../src/env/search-r1.ts';
import { LmTrainer, trajectorySequence } from '../../src/tinylm/index.ts';
import { initJax } from '../../src/util/jax.ts';
import { fixture } from './fixtures.ts';

before(async () => {
  await initJax();
});

function rows() {
  const { env, tokenizer } = fixture();
  return env.train.slice(0, 3).map((p, i) =>
    trajectorySequence(tokenizer, p, [
      { thought: '', action: { type: 'search', input: 'x' }, text: `<think>t${i}</think>\n<search>${p.question.split(' ')[3]}</search>`, observation: formatInformation(env.world.passages.slice(i, i + 1)) },
      { thought: '', action: { type: 'answer', input: p.answers[0]! }, text: `<answer>${p.answers[0]}</answer>`, observation: '' },
    ]),
  );
}

test('supervised steps on a short batch (3 rows of 4) lower the masked negative log-likelihood', () => {
  const { model } = fixture();
  const trainer = new LmTrainer(model, { batch: 4 });
  const seqs = rows();
  const nll = () => {
    const lp = trainer.logprobs(seqs);
    let s = 0;
    let n = 0;
    seqs.forEach((q, j) => q.mask.forEach((m, i) => {
      if (m === 1) {
        s -= lp[j]![i]!;
        n++;
      }
    }));
    return s / n;
  };
  const start = nll();
  let first = 0;
  for (let k = 0; k < 6; k++) {
    const r = trainer.step('sft', seqs.map((seq) => ({ seq })), 0.01);
    if (k === 0) first = r.loss;
    assert.equal(r.tokens, seqs.reduce((a, q) => a + q.mask.reduce((x, y) => x + y, 0), 0));
  }
  assert.ok(Math.abs(first - start) < 1e-3, `the step's reported loss is the masked NLL before it (${first} vs ${start})`);
  assert.ok(nll() < start - 0.5, `NLL ${start} → ${nll()}`);
  assert.equal(trainer.updates, 6);
});

test('a PPO batch whose advantages are all zero takes no step', () => {
  const { model } = fixture();
  const trainer = new LmTrainer(model, { batch: 4 });
  const seqs = rows();
  const r = trainer.step('ppo', seqs.map((seq) => ({ seq, advantages: seq.ids.map(() => 0) })), 0.01);
  assert.deepEqual(r, { loss: 0, tokens: 0 });
  assert.equal(trainer.updates, 0);
  assert.deepEqual(trainer.weights().output, model.weights.output);
});
