import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { strategyFromConfig, type RootCandidate, type StepStart } from '../../src/allocate/index.ts';
import { candidatesFrom, WorldEnv } from '../../src/env/world/world-env.ts';
import { EmbeddedPolicy } from '../../src/policy/embedded/embedded-policy.ts';
import { worldCandidateSource } from '../../src/policy/embedded/candidates.ts';
import type { Prompt } from '../../src/tree/types.ts';
import '../../lab/index.ts';
import { goldActions, goldTrace, goldValue, piGoldStrategy, PREFILL_PRICE } from '../../lab/pi-gold.ts';

// A small late world: 3–4-hop bridges, so each gold trajectory is 4–5 scored choices.
const env = new WorldEnv({ seed: 3, questions: 60, profile: 'late' });
const fresh = () => new EmbeddedPolicy({ candidates: worldCandidateSource(env) });

/** A policy with some weights set, so its choices are not uniform. */
function skewed(): EmbeddedPolicy {
  const policy = fresh();
  for (let i = 0; i < policy.dim; i += 97) policy.weight(i, ((i * 7919) % 13) / 10 - 0.6);
  return policy;
}

function startFor(prompts: readonly Prompt[], policy: EmbeddedPolicy): StepStart {
  return {
    candidates: prompts.map((p): RootCandidate => ({ promptId: p.id, v: 0.5 })),
    evidence: () => undefined,
    multiTurnShare: 0.5,
    freshOutcomes: () => Promise.reject(new Error('pigold draws no rollouts')),
    run: { env, policy },
  };
}

test('π_gold of an untrained policy is Π 1 / (candidates at each gold turn), counted from the world itself', async () => {
  const policy = fresh();
  for (const prompt of env.train.slice(0, 5)) {
    // Independently: walk the gold actions through the environment and count the choice set at each turn.
    let state = env.reset(prompt);
    let expected = 1;
    for (const action of goldActions(prompt)) {
      const c = candidatesFrom(env.world, state);
      const list = action.type === 'search' ? c.search : c.answer;
      assert.ok(list.includes(action.input), `${prompt.id}: gold ${action.type} ${action.input} is a candidate`);
      expected /= c.search.length + c.answer.length;
      state = (await env.step(state, action)).state;
    }
    const trace = await goldTrace(env, policy, prompt);
    assert.equal(trace.turns, goldActions(prompt).length);
    assert.ok(Math.abs(trace.prob - expected) <= 1e-12 * expected, `${prompt.id}: ${trace.prob} against ${expected}`);
  }
});

test('π_gold of a trained policy is the product of its softmax probabilities along the gold path', async () => {
  const policy = skewed();
  const prompt = env.train[0]!;
  let state = env.reset(prompt);
  const turns = [];
  let expected = 1;
  for (const action of goldActions(prompt)) {
    const d = policy.distribution(prompt, turns);
    const k = d.actions.findIndex((a) => a.type === action.type && a.input === action.input);
    assert.ok(k >= 0);
    expected *= d.probs[k]!;
    const out = await env.step(state, action);
    turns.push({ thought: '', action, observation: out.observation });
    state = out.state;
  }
  const trace = await goldTrace(env, policy, prompt);
  assert.ok(Math.abs(trace.prob - expected) <= 1e-12 * expected, `${trace.prob} against ${expected}`);
  assert.notEqual(trace.prob, (await goldTrace(env, fresh(), prompt)).prob, 'the weights change it');
  assert.ok(Math.abs(goldValue(trace, 'geomean') - expected ** (1 / trace.turns)) < 1e-12);
});

test('π_gold lies in (0, 1] on every training question, and the plan feeds it to the solver as v', async () => {
  const policy = skewed();
  const prompts = env.train;
  const plan = await piGoldStrategy({ name: 'pigold', budget: 2_000, unit: 'tokens', min: 2, max: 16, score: 'product', prefillPrice: 0 }).perStep!(
    startFor(prompts, policy),
  );
  assert.equal(plan.candidates.length, prompts.length);
  for (const [i, c] of plan.candidates.entries()) {
    assert.ok(c.v > 0 && c.v <= 1, `${c.promptId}: v = ${c.v}`);
    assert.equal(c.v, (await goldTrace(env, policy, prompts[i]!)).prob);
  }
  assert.equal(plan.strategy.cap, 2_000, 'uncharged: the cap is B');
  assert.equal(plan.metrics?.pigold_charge, 0);
  assert.equal(plan.metrics?.pigold_unreachable, 0);
});

test('the charged plan’s cap is B less the declared price × the gold trajectories’ teacher-forced tokens', async () => {
  const policy = skewed();
  const prompts = env.train.slice(0, 6);
  let tokens = 0;
  for (const p of prompts) tokens += (await goldTrace(env, policy, p)).tokens;
  assert.ok(tokens > 0);
  // Through the registry, as a run's configuration builds it (lab/index.ts registered the name).
  const B = 100_000;
  const charged = strategyFromConfig({ name: 'pigold', budget: B, unit: 'tokens', prefillPrice: PREFILL_PRICE });
  const plan = await charged.perStep!(startFor(prompts, policy));
  assert.equal(plan.metrics?.pigold_prefill_tokens, tokens);
  assert.equal(plan.strategy.cap, B - PREFILL_PRICE * tokens);
  assert.equal(plan.metrics?.pigold_charge, PREFILL_PRICE * tokens);
  assert.equal(plan.strategy.unit, 'tokens');
  // A charge above B leaves nothing (never a negative cap).
  const over = await strategyFromConfig({ name: 'pigold', budget: 10, unit: 'tokens', prefillPrice: PREFILL_PRICE }).perStep!(startFor(prompts, policy));
  assert.equal(over.strategy.cap, 0);
});

test('pigold refuses a run that is not the world with the embedded policy', async () => {
  const s = piGoldStrategy({ name: 'pigold', budget: 100, unit: 'tokens', min: 2, max: 16, score: 'product', prefillPrice: 0 });
  await assert.rejects(async () => s.perStep!({ ...startFor(env.train.slice(0, 1), fresh()), run: { env: {}, policy: {} } }), /world/);
});

test('the library never imports the lab', () => {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (/\.(ts|js|mjs|cjs)$/.test(name)) files.push(path);
    }
  };
  walk(new URL('../../src', import.meta.url).pathname);
  assert.ok(files.length > 50);
  const offenders = files.filter((f) => /(from|import)\s*\(?\s*['"][^'"]*\blab\//.test(readFileSync(f, 'utf8')));
  assert.deepEqual(offenders, []);
});
