import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WorldEnv, parseTurn } from '../../src/env/index.ts';
import { EmbeddedPolicy, PolicySnapshotError, worldCandidateSource } from '../../src/policy/embedded/index.ts';
import type { PolicySample } from '../../src/policy/types.ts';
import { NORMALISATIONS } from '../../src/policy/surrogate.ts';
import { runStep } from '../../src/rollout/index.ts';
import { leaves, turnsTo, type RolloutTree } from '../../src/tree/index.ts';
import { createRng, shuffled } from '../../src/util/rng.ts';
import type { Prompt } from '../../src/tree/types.ts';

const env = new WorldEnv({ seed: 1 });
const make = () => new EmbeddedPolicy({ candidates: worldCandidateSource(env), dim: 1 << 14 });
const ctxFor = (prompt: Prompt, seed: number, greedy = false) => ({
  prompt,
  rendered: env.render(prompt),
  turns: [],
  rng: createRng(seed),
  greedy,
  maxTokens: 512,
});

/** Rollouts through the real engine; returns trees and one GRPO-style sample per leaf. */
async function rollouts(policy: EmbeddedPolicy, prompts: Prompt[], m: number, seed: number, greedy = false) {
  const res = await runStep({
    prompts,
    env,
    policy,
    rng: createRng(seed),
    rootPlan: new Map(prompts.map((p) => [p.id, m])),
    greedy,
    settings: { concurrency: 32 },
  });
  return res.trees;
}

function successRate(trees: RolloutTree[]): number {
  const r = trees.flatMap((t) => leaves(t).map((l) => l.reward ?? 0));
  return r.reduce((a, b) => a + b, 0) / r.length;
}

/** Outcome advantages normalised within each prompt's group, broadcast to every turn. */
function grpoSamples(trees: RolloutTree[], prompts: Prompt[]): PolicySample[] {
  const out: PolicySample[] = [];
  for (const t of trees) {
    const ls = leaves(t);
    const r = ls.map((l) => l.reward ?? 0);
    const mean = r.reduce((a, b) => a + b, 0) / r.length;
    const std = Math.sqrt(r.reduce((a, b) => a + (b - mean) ** 2, 0) / r.length);
    const prompt = prompts.find((p) => p.id === t.promptId)!;
    ls.forEach((l, i) => {
      const turns = turnsTo(t, l.id);
      const A = std > 0 ? (r[i]! - mean) / (std + 1e-6) : 0;
      out.push({ prompt, turns, advantages: turns.map(() => A) });
    });
  }
  return out;
}

test('act returns a Search-R1 turn with the exact log π(a) and entropy of its candidate distribution', async () => {
  const policy = make();
  const prompt = env.train[3]!;
  const out = await policy.act(ctxFor(prompt, 1));
  const parsed = parseTurn(out.text);
  assert.ok(parsed.ok);
  assert.deepEqual(parsed.action, out.action);
  const d = policy.distribution(prompt, []);
  const k = d.actions.findIndex((a) => a.type === out.action!.type && a.input === out.action!.input);
  assert.ok(Math.abs(out.logprob! - Math.log(d.probs[k]!)) < 1e-12);
  assert.ok(Math.abs(out.entropy! - Math.log(d.actions.length)) < 1e-9, 'zero weights: uniform, H = log n');
  assert.ok(Math.abs(d.probs.reduce((a, b) => a + b, 0) - 1) < 1e-12);
});

test('sampling follows π; greedy takes the argmax', async () => {
  const policy = make();
  const prompt = env.train[5]!;
  // Make the distribution non-uniform with one PPO step toward one action.
  const d0 = policy.distribution(prompt, []);
  const target = d0.actions[1]!;
  const turn = { thought: '', action: target, observation: '' };
  policy.update([{ prompt, turns: [turn], advantages: [1] }], { learningRate: 0.5 });
  const d = policy.distribution(prompt, []);
  const counts = new Map<string, number>();
  const N = 3000;
  for (let i = 0; i < N; i++) {
    const o = await policy.act(ctxFor(prompt, 100 + i));
    const key = `${o.action!.type}:${o.action!.input}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  d.actions.forEach((a, i) => {
    const f = (counts.get(`${a.type}:${a.input}`) ?? 0) / N;
    assert.ok(Math.abs(f - d.probs[i]!) < 4 * Math.sqrt((d.probs[i]! * (1 - d.probs[i]!)) / N) + 1e-3, `${a.input}: ${f} vs ${d.probs[i]}`);
  });
  assert.ok(Math.max(...d.probs) > Math.min(...d.probs) + 0.01, 'the update made π non-uniform');
  const g = await policy.act(ctxFor(prompt, 1, true));
  assert.deepEqual(g.action, d.actions[d.probs.indexOf(Math.max(...d.probs))]);
});

test('the surrogate gradient matches finite differences under every normalisation, and clipped turns give none', async () => {
  const policy = make();
  const prompts = env.train.slice(0, 6);
  const trees = await rollouts(policy, prompts, 3, 2);
  // Every third sample carries no advantage (a dead group): only batch counts its turns.
  const samples = grpoSamples(trees, prompts).map((s, i) => ({ ...s, advantages: s.turns.map((_, j) => (i % 3 === 2 ? 0 : ((i + j) % 3) - 1 + 0.3)) }));
  policy.update(samples, { learningRate: 0.05 }); // move off π_old so ratios ≠ 1
  const byForm = new Map<string, { gradient: Float64Array; turns: number }>();
  for (const normalise of NORMALISATIONS) {
    const opts = { clip: 0.2, entropyCoef: 0.01, normalise };
    const { gradient, metrics } = policy.surrogate(samples, opts);
    byForm.set(normalise, { gradient, turns: metrics.turns });
    const top = [...gradient.keys()].sort((a, b) => Math.abs(gradient[b]!) - Math.abs(gradient[a]!)).slice(0, 5);
    assert.ok(Math.abs(gradient[top[0]!]!) > 1e-5, normalise);
    const L = () => -policy.surrogate(samples, opts).metrics.loss;
    for (const i of top) {
      const w = policy.weight(i);
      const h = 1e-6;
      policy.weight(i, w + h);
      const up = L();
      policy.weight(i, w - h);
      const down = L();
      policy.weight(i, w);
      assert.ok(Math.abs((up - down) / (2 * h) - gradient[i]!) < 1e-5, `${normalise}, weight ${i}: fd ${(up - down) / (2 * h)} vs ${gradient[i]}`);
    }
  }
  // The three forms differ only by their divisor: contributing turns, samples, every sampled turn.
  const all = samples.reduce((n, s) => n + s.turns.length, 0);
  const { gradient: gt, turns: n } = byForm.get('turns')!;
  assert.ok(n < all && samples.length !== n, 'the divisors differ on this batch');
  for (const [form, D] of [
    ['samples', samples.length],
    ['batch', all],
  ] as const) {
    const g = byForm.get(form)!.gradient;
    for (let i = 0; i < g.length; i += 97) assert.ok(Math.abs(g[i]! * D - gt[i]! * n) < 1e-9, `${form}[${i}]`);
  }
  // A positive-advantage turn whose ratio is already above 1 + ε contributes no gradient.
  const prompt = env.train[0]!;
  const d = policy.distribution(prompt, []);
  const turn = { thought: '', action: d.actions[0]!, observation: '', logprob: Math.log(d.probs[0]!) - 1 };
  const r = policy.surrogate([{ prompt, turns: [turn], advantages: [1] }], { clip: 0.2 });
  assert.equal(r.metrics.clipFraction, 1);
  assert.ok(r.gradient.every((x) => x === 0));
});

test('save/load reproduces the policy exactly; a foreign snapshot is refused', async () => {
  const policy = make();
  const prompts = env.train.slice(0, 4);
  policy.update(grpoSamples(await rollouts(policy, prompts, 4, 3), prompts));
  const copy = make();
  copy.load(policy.save());
  for (const p of prompts) assert.deepEqual(copy.distribution(p, []).probs, policy.distribution(p, []).probs);
  assert.throws(() => new EmbeddedPolicy({ candidates: worldCandidateSource(env), dim: 1 << 12 }).load(policy.save()), PolicySnapshotError);
  assert.throws(() => copy.load(new TextEncoder().encode('hello\n')), PolicySnapshotError);
});

test('starts weak with mixed outcomes, and 150 PPO updates on the world raise held-out success', async () => {
  const policy = make();
  const heldOut = env.test.slice(0, 80);
  const before = await rollouts(policy, heldOut, 4, 10);
  const mixedBefore = before.filter((t) => new Set(leaves(t).map((l) => l.reward)).size === 2).length / before.length;
  assert.ok(mixedBefore > 0.2, `many questions give mixed outcomes at the start (${mixedBefore})`);
  const rng = createRng(7);
  for (let it = 0; it < 150; it++) {
    const batch = shuffled(env.train, rng.fork(it)).slice(0, 8);
    const trees = await rollouts(policy, batch, 4, 1000 + it);
    policy.update(grpoSamples(trees, batch), { epochs: 2 });
  }
  const after = await rollouts(policy, heldOut, 4, 10);
  const [b, a] = [successRate(before), successRate(after)];
  if (process.env.TRACE_VERBOSE) console.log(`held-out success ${b.toFixed(3)} → ${a.toFixed(3)}, mixed at start ${mixedBefore.toFixed(2)}`);
  assert.ok(a > b + 0.1, `success ${b.toFixed(3)} → ${a.toFixed(3)}`);
});
