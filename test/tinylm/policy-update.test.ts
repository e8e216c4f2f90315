import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { runStep } from '../../src/rollout/index.ts';
import { LmTrainer, TinyLmPolicy, trajectorySequence, turnText } from '../../src/tinylm/index.ts';
import type { Turn } from '../../src/tree/index.ts';
import { formatInformation } from '../../src/env/search/search-r1.ts';
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
    const res = await runStep({
      prompts,
      env,
      policy,
      rng: createRng(4),
      rootPlan: new Map(prompts.map((p) => [p.id, 2])),
      settings: { maxTurns: 2, concurrency: 2 },
    });
    const samples = res.trees.flatMap((t) =>
      leaves(t).map((leaf, k) => {
        const turns = turnsTo(t, leaf.id);
        return { prompt: prompts.find((p) => p.id === t.promptId)!, turns, advantages: turns.map(() => (k % 2 === 0 ? 1 : -1)) };
      }),
    );
    const seqs = samples.map((s) => trajectorySequence(policy.tokenizer, s.prompt, s.turns));
    const mean = (lp: number[][], sign: number) => {
      let sum = 0;
      let n = 0;
      seqs.forEach((s, j) =>
        s.mask.forEach((m, i) => {
          if (m === 1 && samples[j]!.advantages[0] === sign) {
            sum += lp[j]![i]!;
            n++;
          }
        }),
      );
      return sum / n;
    };
    const before = new LmTrainer(model, { batch: 4 }).logprobs(seqs);
    // The trainer's log π is the sampler's, so the first pass's PPO ratios are 1 up to the agreement tolerance.
    let gap = 0;
    seqs.forEach((s, j) =>
      s.mask.forEach((m, i) => {
        if (m === 1) gap = Math.max(gap, Math.abs(before[j]![i]! - s.logprobs[i]!));
      }),
    );
    assert.ok(gap < 1e-4, `sampler vs trainer ${gap}`);
    const metrics = await policy.update(samples, { learningRate: 0.01, clip: 0.2, epochs: 2 });
    assert.ok(metrics.turns > 0 && Number.isFinite(metrics.loss));
    assert.equal(policy.trainer.updates, 2, 'one Adam step per pass');
    const after = policy.trainer.logprobs(seqs);
    assert.ok(mean(after, 1) > mean(before, 1), 'positive-advantage tokens became likelier');
    assert.ok(mean(after, -1) < mean(before, -1), 'negative-advantage tokens became less likely');
    // Weight sync: a new rollout's recorded probabilities are the updated trainer's, not the old weights'.
    const next = await runStep({
      prompts: prompts.slice(0, 1),
      env,
      policy,
      rng: createRng(5),
      rootPlan: new Map([[prompts[0]!.id, 1]]),
      settings: { maxTurns: 1 },
    });
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

test('update: one Adam step per pass over the whole batch, even when the batch packs into several grids', async () => {
  // Packed, a batch is several grids (by row length, and rows per grid); one Adam step per grid puts a
  // group's positive and negative trajectories in different steps, each pushing one sign of advantage
  // alone at Adam's full step size (BENCHMARKS.md, "Why RL did not improve the tiny LM"). A pass must be
  // one step on the contrast of the whole batch. Here a grid holds one 512-position row, so the two
  // trajectories (> 256 positions each) are two grids.
  const { env, model, tokenizer } = fixture();
  const policy = new TinyLmPolicy(model, { trainer: { batch: 4, gridTokens: 512 } });
  try {
    const q = env.train[0]!;
    const passages = [formatInformation(env.world.passages.slice(0, 3)), formatInformation(env.world.passages.slice(3, 6))];
    const turn = (type: 'search' | 'answer', input: string, observation: string): Turn => ({
      thought: '',
      action: { type, input },
      text: turnText({ type, input }),
      observation,
    });
    const trajectory = (answer: string) => [turn('search', q.question, passages[0]!), turn('search', q.question, passages[1]!), turn('answer', answer, '')];
    // Record the tokens with their log π under the current weights, as a rollout would.
    const withTokens = (turns: Turn[]): Turn[] => {
      const seq = trajectorySequence(tokenizer, q, turns);
      const lp = policy.trainer.logprobs([seq])[0]!;
      return turns.map((t, i) => {
        const at = seq.turn.map((k, j) => (k === i ? j : -1)).filter((j) => j >= 0);
        return { ...t, tokens: { ids: at.map((j) => seq.ids[j]!), logprobs: at.map((j) => lp[j]!), mask: at.map(() => 1) } };
      });
    };
    const good = trajectory(q.answers[0]!);
    const bad = trajectory('no');
    const samples = [
      { prompt: q, turns: withTokens(good), advantages: good.map(() => 1) },
      { prompt: q, turns: withTokens(bad), advantages: bad.map(() => -1) },
    ];
    const seqs = samples.map((s) => trajectorySequence(tokenizer, s.prompt, s.turns));
    for (const s of seqs) assert.ok(s.ids.length > 257 && s.ids.length <= 512, `${s.ids.length} tokens: one 512-position row each`);
    const before = policy.trainer.logprobs(seqs);
    await policy.update(samples, { learningRate: 0.01, clip: 0.2, epochs: 1 });
    assert.equal(policy.trainer.updates, 1, 'one pass is one Adam step');
    // The step is the whole batch's: the same as one trainer step on both rows.
    const ref = new LmTrainer(model, { batch: 4, gridTokens: 512 });
    await ref.step('ppo', policy.rows(samples), 0.01, 0.2);
    const after = policy.trainer.logprobs(seqs);
    const expected = ref.logprobs(seqs);
    ref.dispose();
    after.forEach((row, j) => row.forEach((v, i) => assert.ok(Math.abs(v - expected[j]![i]!) < 1e-5, `row ${j} token ${i}: ${v} vs ${expected[j]![i]}`)));
    const total = (lp: number[][], j: number) => seqs[j]!.mask.reduce((a, m, i) => a + (m === 1 ? lp[j]![i]! : 0), 0);
    assert.ok(total(after, 0) > total(before, 0), 'the positive trajectory became likelier');
    assert.ok(total(after, 1) < total(before, 1), 'the negative trajectory became less likely');
  } finally {
    await policy.dispose();
  }
});

test("temperature: rollouts sampled at τ = 0.7 record log softmax(logits / 0.7), which the policy's trainer computes too", async () => {
  const { env, model } = fixture();
  const policy = new TinyLmPolicy(model, { maxTokensPerTurn: 24, temperature: 0.7 });
  try {
    const prompts = env.train.slice(0, 2);
    const res = await runStep({
      prompts,
      env,
      policy,
      rng: createRng(9),
      rootPlan: new Map(prompts.map((p) => [p.id, 2])),
      settings: { maxTurns: 2, concurrency: 2 },
    });
    const seqs = res.trees.flatMap((t) =>
      leaves(t).map((leaf) =>
        trajectorySequence(
          policy.tokenizer,
          prompts.find((p) => p.id === t.promptId)!,
          turnsTo(t, leaf.id),
        ),
      ),
    );
    const tempered = policy.trainer.logprobs(seqs);
    const plain = new LmTrainer(model).logprobs(seqs);
    let gap = 0;
    let gapPlain = 0;
    let n = 0;
    seqs.forEach((s, j) =>
      s.mask.forEach((m, i) => {
        if (m !== 1) return;
        gap = Math.max(gap, Math.abs(tempered[j]![i]! - s.logprobs[i]!));
        gapPlain = Math.max(gapPlain, Math.abs(plain[j]![i]! - s.logprobs[i]!));
        n++;
      }),
    );
    assert.ok(n > 10, `sampled tokens: ${n}`);
    assert.ok(gap < 1e-4, `sampler vs tempered trainer: ${gap} nats`);
    assert.ok(gapPlain > 1e-2, `the τ = 1 trainer must disagree, or the test cannot tell the two apart (${gapPlain})`);
  } finally {
    await policy.dispose();
  }
});

test('temperature: a non-positive τ is rejected by the trainer', () => {
  const { model } = fixture();
  assert.throws(() => new LmTrainer(model, { temperature: 0 }), /temperature must be a positive number/);
});
