/**
 * policy.sharedTurns: how turns shared by several leaves (expanded prefixes) enter the policy loss.
 * Real trace step on the real simulator; the samples are what the step hands to policy.update.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createEstimator } from '../../src/advantage/index.ts';
import { createStrategy } from '../../src/allocate/index.ts';
import { Simulator } from '../../src/env/index.ts';
import { SimulatorPolicy } from '../../src/policy/index.ts';
import { runStep } from '../../src/rollout/index.ts';
import { parseTrainConfig } from '../../src/train/config.ts';
import { policySamples } from '../../src/train/step.ts';
import { createRng } from '../../src/util/rng.ts';

test('sharedTurns once: every tree node is one nonzero term with its per-node advantage; per-leaf repeats shared turns', async () => {
  const env = new Simulator({ seed: 7 });
  const prompts = env.prompts(8);
  const { trees } = await runStep({ prompts, env, policy: new SimulatorPolicy(env), rng: createRng(1), strategy: createStrategy('trace', { budget: 48 }), settings: { retry: { baseDelayMs: 1, maxDelayMs: 2 } } });
  const estimator = createEstimator('trace');
  const perLeaf = policySamples(estimator, trees, prompts, 'per-leaf');
  const once = policySamples(estimator, trees, prompts, 'once');
  assert.equal(once.length, perLeaf.length, 'one sample per leaf either way');
  const terms = (samples: typeof once) => samples.reduce((n, s) => n + s.advantages.filter((a) => a !== 0 && !Number.isNaN(a)).length, 0);
  assert.ok(terms(once) < terms(perLeaf), 'shared prefix turns counted once, not once per leaf');
  // Per node: the first occurrence keeps the per-leaf value, later ones are 0.
  const adv = estimator.estimate((await import('../../src/advantage/index.ts')).forestFromTrees(trees));
  const first = new Map<string, number>();
  adv.forEach((a, k) => a.path.forEach((id, i) => {
    if (!first.has(id)) {
      first.set(id, a.turns[i]);
      assert.equal(once[k].advantages[i], perLeaf[k].advantages[i]);
    } else {
      assert.equal(once[k].advantages[i], 0);
      assert.equal(perLeaf[k].advantages[i], first.get(id), 'trace gives a shared node the same advantage in every leaf');
    }
  }));
  assert.ok([...first.keys()].length < adv.reduce((n, a) => n + a.path.length, 0), 'some node is shared');
});

test('sharedTurns once needs the trace estimator', () => {
  assert.throws(() => parseTrainConfig({ estimator: 'grpo', policy: { sharedTurns: 'once' } }), /policy\.sharedTurns: once needs estimator trace/);
  assert.equal((parseTrainConfig({ policy: { sharedTurns: 'once' } }).policy as { sharedTurns?: string }).sharedTurns, 'once');
});
