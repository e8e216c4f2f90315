import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WorldEnv, candidatesFrom, demoNoise, generateQuestions, generateWorld, worldMeta, type SearchState } from '../../src/env/index.ts';
import { buildComponents, parseTrainConfig } from '../../src/train/index.ts';

test('late profile: 3–4-hop bridge questions only, every gold entity distinct; the default profile is unchanged', () => {
  const world = generateWorld(7);
  const late = generateQuestions(world, 300, 7, 'late');
  assert.equal(late.length, 300);
  for (const q of late) {
    assert.equal(q.kind, 'bridge');
    assert.ok(q.hops === 3 || q.hops === 4, `${q.question}: ${q.hops} hops`);
    assert.equal(new Set(q.goldPath).size, q.goldPath.length);
  }
  // Both lengths occur.
  assert.ok(late.some((q) => q.hops === 3) && late.some((q) => q.hops === 4));
  assert.deepEqual(generateQuestions(world, 200, 7, 'default'), generateQuestions(world, 200));
  const kinds = new Set(new WorldEnv({ seed: 7 }).train.map((p) => worldMeta(p).kind));
  assert.ok(kinds.has('comparison') && kinds.has('yes-no'), 'the default world keeps its comparisons');
});

test('late profile: each later choice is decidable from what the policy sees (gold next hop and answer are candidates)', async () => {
  const env = new WorldEnv({ seed: 3, questions: 120, profile: 'late' });
  for (const prompt of env.train.slice(0, 60)) {
    const meta = worldMeta(prompt);
    let state: SearchState = env.reset(prompt);
    for (const name of meta.goldPath) {
      assert.ok(candidatesFrom(env.world, state).search.includes(name), `${prompt.question}: ${name} is not a search candidate`);
      state = (await env.step(state, { type: 'search', input: name })).state;
    }
    assert.ok(candidatesFrom(env.world, state).answer.includes(prompt.answers[0]!), `${prompt.question}: the gold answer is not a candidate`);
  }
});

test('late profile: config option env.world.profile, demonstrator noise × 2 (capped at 1); no option = no env.world', async () => {
  assert.equal(demoNoise('late', 0.35), 0.7);
  assert.equal(demoNoise('late', 0.8), 1);
  assert.equal(demoNoise('default', 0.35), 0.35);
  // Absent, so a default configuration (and its cached warm start's hash) is exactly as before.
  assert.equal('world' in parseTrainConfig({}).env, false);
  assert.throws(() => parseTrainConfig({ env: { world: { profile: 'early' } } }));
  const config = parseTrainConfig({ env: { questions: 60, world: { profile: 'late' } }, policy: { warmStart: 'none' } });
  const parts = await buildComponents(config);
  assert.equal((parts.env as WorldEnv).profile, 'late');
  assert.ok(parts.train.every((p) => worldMeta(p).hops >= 3));
});

// The profile's measured promises (a sparse warm start, contrast after turn 2) are checked with the
// world bench's contrast measure, beside it: bench/world/late.test.ts.
