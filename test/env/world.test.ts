import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ScriptedWorldPolicy } from '../../src/policy/index.ts';
import { WorldEnv, candidatesFrom, generateQuestions, generateWorld, titlesIn, worldMeta } from '../../src/env/index.ts';
import type { Policy } from '../../src/policy/types.ts';
import type { Prompt } from '../../src/tree/types.ts';
import { createRng, type Rng } from '../../src/util/rng.ts';
import { playEpisode } from '../contracts/episode.ts';

const env = new WorldEnv({ seed: 5, questions: 600 });

const run = (policy: Policy, prompt: Prompt, rng: Rng) => playEpisode(env, policy, prompt, rng);

test('the world is deterministic for a seed and differs across seeds', () => {
  assert.deepEqual(generateWorld(5).passages, env.world.passages);
  assert.notDeepEqual(
    generateWorld(6).passages.map((p) => p.text),
    env.world.passages.map((p) => p.text),
  );
  assert.deepEqual(generateQuestions(env.world, 50), generateQuestions(generateWorld(5), 50));
});

test('every question is answerable from its gold path: gold passages state the next hop and the answer', () => {
  for (const p of [...env.train, ...env.test]) {
    const m = worldMeta(p);
    assert.equal(m.goldPath.length, m.hops, p.question);
    assert.ok(m.hops >= 1 && m.hops <= 4);
    const texts = m.goldPath.map((n) => env.world.passages.find((x) => x.title === n)!.text);
    const answer = p.answers[0]!;
    if (m.kind === 'bridge') {
      assert.ok(texts[texts.length - 1]!.includes(answer), `${p.question} → ${answer}`);
      for (let i = 1; i < m.goldPath.length; i++) assert.ok(texts[i - 1]!.includes(m.goldPath[i]!), `hop ${i} of ${p.question}`);
    }
  }
  const hops = new Set([...env.train, ...env.test].map((p) => worldMeta(p).hops));
  assert.deepEqual([...hops].sort(), [1, 2, 3, 4]);
});

test('train and test share no question', () => {
  const train = new Set(env.train.map((p) => p.question));
  assert.ok(env.test.length > 50);
  for (const p of env.test) assert.ok(!train.has(p.question), p.question);
});

test('BM25 finds an entity passage by its name', () => {
  let top1 = 0;
  for (const p of env.world.passages) if (env.index.search(p.title, 3)[0]?.title === p.title) top1++;
  assert.ok(top1 / env.world.passages.length > 0.9, `top-1 ${top1}/${env.world.passages.length}`);
});

test('following the gold path with no noise solves every question; candidates contain the gold next hop and answer', async () => {
  const exact = new ScriptedWorldPolicy(env, { noise: 0 });
  for (const p of env.test.slice(0, 60)) {
    const { last: end, states } = await run(exact, p, createRng(1));
    assert.equal(end.reward, 1, p.question);
    const m = worldMeta(p);
    const last = states[states.length - 2]!;
    const c = candidatesFrom(env.world, last);
    assert.ok(c.answer.includes(p.answers[0]!), `answer candidate for ${p.question}`);
    for (const n of m.goldPath) assert.ok(c.search.includes(n));
  }
});

test('difficulty spreads under the noisy scripted policy: easy and hard questions both exist', async () => {
  const policy = new ScriptedWorldPolicy(env, { noise: 0.35 });
  const rates: number[] = [];
  for (const p of env.test.slice(0, 40)) {
    let wins = 0;
    for (let i = 0; i < 8; i++) wins += (await run(policy, p, createRng(i).fork(p.id))).last.reward ?? 0;
    rates.push(wins / 8);
  }
  assert.ok(
    rates.some((r) => r >= 0.875),
    'some nearly always solved',
  );
  assert.ok(
    rates.some((r) => r <= 0.25),
    'some nearly never solved',
  );
  assert.ok(rates.filter((r) => r > 0 && r < 1).length >= 10, `mixed: ${rates.join(',')}`);
});

// Restore equals replay (and the continuation's observations) is part of the environment contract (test/env/contract.test.ts).
test('observations list Search-R1 documents with titles', async () => {
  const p = env.test[0]!;
  const step = await env.step(env.reset(p), { type: 'search', input: worldMeta(p).goldPath[0]! });
  assert.match(step.observation, /^\n\n<information>Doc 1\(Title: "/);
  assert.equal(titlesIn(step.observation).length, 3);
});
