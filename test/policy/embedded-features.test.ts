/**
 * The embedded policy's feature indices are its feature names hashed (featureIndices runs the hash on
 * from shared prefixes instead of building each name): the same indices, in the same order, for every
 * candidate of real world rollouts — every turn depth, both action types, with and without a retrieved
 * passage to read the two words before a mention from, and the environment's own extra features.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WorldEnv } from '../../src/env/index.ts';
import { candidateActions } from '../../src/policy/embedded/candidates.ts';
import { featureContext, featureIndices, featureNames, hashFeature } from '../../src/policy/embedded/features.ts';
import { ScriptedWorldPolicy } from '../../src/policy/index.ts';
import { runStep } from '../../src/rollout/index.ts';
import { leaves, turnsTo } from '../../src/tree/index.ts';
import { createRng } from '../../src/util/rng.ts';
import { worldCandidateSource } from '../../src/policy/embedded/index.ts';

test('featureIndices is featureNames hashed, name by name, on real rollouts', async () => {
  const env = new WorldEnv({ questions: 120, seed: 3 });
  const prompts = env.train.slice(0, 40);
  const result = await runStep({
    prompts,
    env,
    policy: new ScriptedWorldPolicy(env, { noise: 0.5 }),
    rng: createRng(9),
    rootPlan: new Map(prompts.map((p) => [p.id, 2])),
    settings: { maxTurns: env.maxTurns },
  });
  const source = worldCandidateSource(env);
  const byId = new Map(prompts.map((p) => [p.id, p]));
  let candidates = 0;
  const seen = { withPrevious: 0, types: new Set<string>(), depths: new Set<number>() };
  for (const tree of result.trees) {
    const prompt = byId.get(tree.promptId)!;
    for (const leaf of leaves(tree)) {
      const turns = turnsTo(tree, leaf.id);
      for (let i = 0; i <= turns.length; i++) {
        const before = turns.slice(0, i);
        const ctx = featureContext(prompt, before);
        for (const action of candidateActions(source(prompt, before))) {
          const extra = candidates % 3 === 0 ? [`extra|${action.input}`, 'extra|constant'] : [];
          const names = featureNames(ctx, action, extra);
          for (const dim of [1 << 16, 1000])
            assert.deepEqual(
              [...featureIndices(ctx, action, dim, extra)],
              names.map((n) => hashFeature(n, dim)),
              names.join('\n'),
            );
          candidates++;
          if (names.some((n) => n.includes('|p1='))) seen.withPrevious++;
          seen.types.add(action.type);
          seen.depths.add(i);
        }
      }
    }
  }
  assert.ok(candidates > 1000, `${candidates} candidates`);
  assert.ok(seen.withPrevious > 100, 'candidates with a mention to read the words before');
  assert.deepEqual([...seen.types].sort(), ['answer', 'search']);
  assert.ok(seen.depths.size >= 3, `turn depths ${[...seen.depths]}`);
});
