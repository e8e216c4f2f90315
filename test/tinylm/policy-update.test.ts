import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { runStep } from '../../src/rollout/index.ts';
import { LmTrainer, TinyLmPolicy, trajectorySequence } from '../../src/tinylm/index.ts';
import { initJax } from '../../src/util/jax.ts';
import { leaves, turnsTo } from '../../src/tree/index.ts';
import { createRng } from '../../src/util/rng.ts';
import { fixture } from './fixtures.ts';

before(async () => {
  await initJax();
});

test('update: PPO on the turns raises the log-probability of positively advantaged tokens, and llama.cpp samples from the synced weights', async () => {
  const { env, model } = fixture();
  const policy = new TinyLmPolicy(model, { maxTokensPerTurn: 24, trainer: { batch: 4 } });
  try {
    const prompts = env.train.slice(0, 2);
    const res = await runStep({ prompts, env, policy, rng: createRng(4), rootPlan: new Map(prompts.map((p) => [p.id, 2])), settings: { maxTurns: 2, concurrency: 2 } });
    const samples = res.trees.flatMap((t) => leaves(t).map((leaf, k) => {
      const turns = turnsTo(t, leaf.id);
      return { prompt: prompts.find((p) => p.id === t.promptId)!, turns, advantages: turns.map(() => (k % 2 === 0 ? 1 : -1)) };
    }));
    const seqs = samples.map((s) => trajectorySequence(policy.tokenizer, s.prompt, s.turns));
    const mean = (lp: number[][], sign: number) => {
      let sum = 0;
      let n = 0;
      seqs.forEach((s, j) => s.mask.forEach((m, i) => {
        if (m === 1 && samples[j]!.advantages[0] === sign) {
          sum += lp[j]![i]!;
          n++;
        }
      }));
      return sum / n;
    };
    const before = new LmTrainer(model, { batch: 4 }).logprobs(seqs);
    const metrics = await policy.update(samples, { learningRate: 0.01, clip: 0.2, epochs: 2 });
    assert.ok(metrics.turns > 0 && Number.isFinite(metrics.loss));
    // Metrics are the first pass's, from its own forward pass before the Adam step (one grid here):
    // the trainer's log π is the sampler's, so the ratios are 1 up to the agreement tolerance.
    assert.ok(Math.abs(metrics.approxKl) < 1e-4, `first-pass KL ${metrics.approxKl}`);
    assert.equal(metrics.clipFraction, 0);
    const after = policy.trainer.logprobs(seqs);
    assert.ok(mean(after, 1) > mean(before, 1), 'positive-advantage tokens became likelier');
    assert.ok(mean(after, -1) < mean(before, -1), 'negative-advantage tokens became less likely');
    // Weight sync: a new rollout's recorded probabilities are the updated trainer's, not the old weights'.
    const next = await runStep({ prompts: prompts.slice(0, 1), env, policy, rng: createRng(5), rootPlan: new Map([[prompts[0]!.id, 1]]), settings: { maxTurns: 1 } });
    const turns = turnsTo(next.trees[0]!, leaves(next.trees[0]!)[0]!.id);
    const seq = trajectorySequence(policy.tokenizer, prompts[0]!, turns);
    const now = policy.trainer.logprobs([seq])[0]!;
    const old = new LmTrainer(model, { batch: 4 }).logprobs([seq])[0]!;
    let gapNow = 0;
    let gapOld = 0;
    seq.mask.forEach((m, i) => {
      if (m !== 1) return;
      gapNow = Math.max(gapNow, Math.abs(now[i]! - seq.logprobs[i]!));
      gapOld = Math.max(gapOld, Math.abs(old[i]! - seq.logprobs[i]!));
    });
    assert.ok(gapNow < 1e-3, `synced: ${gapNow}`);
    assert.ok(gapOld > 10 * gapNow, `old weights differ: ${gapOld}`);
    // Snapshots restore weights and optimiser state.
    const snap = policy.save();
    const other = new TinyLmPolicy(model, { trainer: { batch: 4 } });
    other.load(snap);
    await other.ready();
    assert.deepEqual(other.trainer.logprobs([seq]), policy.trainer.logprobs([seq]));
    assert.equal(other.trainer.updates, policy.trainer.updates);
    await other.dispose();
  } finally {
    await policy.dispose();
  }
});
