import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Simulator } from '../../src/env/index.ts';
import { SimulatorPolicy } from '../../src/policy/index.ts';
import { sampledAccuracy } from '../../src/eval/index.ts';
import { createRng } from '../../src/util/rng.ts';

// The simulator knows each prompt's exact success probability under its random policy, so the sampled
// success rate has a known mean.
const env = new Simulator({ seed: 11 });
const policy = new SimulatorPolicy(env);
const prompts = env.prompts(60);
const truth = prompts.reduce((s, p) => s + env.trueSuccess(p, []), 0) / prompts.length;

test('sampled held-out accuracy estimates the mean true success probability', async () => {
  const samples = 40;
  const sampled = await sampledAccuracy({ env, policy, prompts, rng: createRng(3), samples });
  // Each prompt's mean of 40 Bernoulli(v) has variance ≤ 1/160; the mean over 60 prompts has sd ≤ 0.0102.
  assert.ok(Math.abs(sampled - truth) < 4 * 0.0102, `sampled ${sampled} vs true mean ${truth}`);
  // Per prompt too, where a greedy rollout could only score 0 or 1: on prompts with v in [0.3, 0.7].
  const middling = prompts.filter((p) => Math.abs(env.trueSuccess(p, []) - 0.5) <= 0.2).slice(0, 3);
  assert.equal(middling.length, 3);
  for (const p of middling) {
    const rate = await sampledAccuracy({ env, policy, prompts: [p], rng: createRng(4), samples: 400 });
    assert.ok(Math.abs(rate - env.trueSuccess(p, [])) < 0.1, `prompt ${p.id}: sampled ${rate} vs v ${env.trueSuccess(p, [])}`);
  }
});

test('sampled accuracy is a count over prompts × samples, deterministic per random stream', async () => {
  const a = await sampledAccuracy({ env, policy, prompts: prompts.slice(0, 10), rng: createRng(5), samples: 3 });
  const b = await sampledAccuracy({ env, policy, prompts: prompts.slice(0, 10), rng: createRng(5), samples: 3 });
  assert.equal(a, b);
  assert.ok(Number.isInteger(Math.round(a * 30 * 1e9) / 1e9), `${a} is k/30`);
  await assert.rejects(sampledAccuracy({ env, policy, prompts, rng: createRng(5), samples: 0 }), /samples must be an integer ≥ 1/);
});
