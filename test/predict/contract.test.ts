/**
 * Every success predictor passes the shared contract (test/contracts/predictor.ts) on targets of real
 * rollout trees: the embedded world played by the scripted policy, two steps.
 */
import { WorldEnv } from '../../src/env/index.ts';
import { ScriptedWorldPolicy } from '../../src/policy/index.ts';
import {
  BetaBernoulliPredictor,
  createFeatures,
  createMlpPredictor,
  GlobalRatePredictor,
  PosteriorPredictor,
  samplesFromTrees,
  predictorKinds,
  type PredictorSettings,
  type TargetSample,
} from '../../src/predict/index.ts';
import { runStep } from '../../src/rollout/index.ts';
import { createRng } from '../../src/util/rng.ts';
import { predictorContract } from '../contracts/predictor.ts';

const env = new WorldEnv({ seed: 4, questions: 200 });
const policy = new ScriptedWorldPolicy(env, { noise: 0.35 });
const batches: TargetSample[][] = [];
for (const step of [0, 1]) {
  const prompts = env.train.slice(step * 6, step * 6 + 6);
  const { trees } = await runStep({ prompts, env, policy, rng: createRng(step), rootPlan: new Map(prompts.map((p) => [p.id, 4])) });
  batches.push(samplesFromTrees(trees, prompts));
}

predictorContract('mlp', {
  make: () => createMlpPredictor({ features: createFeatures({ hashed: { maxTurns: 6, useGold: true } }), hidden: [16], lr: 0.01, replaySteps: 2, seed: 3 }),
  batches,
});
predictorContract('posterior over the mlp (template questions, prefixes shifted)', {
  make: async () =>
    new PosteriorPredictor(
      await createMlpPredictor({
        features: createFeatures({ hashed: { maxTurns: 6, questionFeatures: 'template' } }),
        hidden: [16],
        lr: 0.01,
        replaySteps: 2,
        seed: 3,
      }),
      { strength: 4, discount: 0.9, prefixes: 'shift' },
    ),
  batches,
});
predictorContract('posterior over the mlp (defaults: question words, prefixes unchanged)', {
  make: async () =>
    new PosteriorPredictor(
      await createMlpPredictor({ features: createFeatures({ hashed: { maxTurns: 6 } }), hidden: [16], lr: 0.01, replaySteps: 2, seed: 3 }),
    ),
  batches,
});
predictorContract('beta-bernoulli', { make: () => new BetaBernoulliPredictor(), batches });
predictorContract('global rate', { make: () => new GlobalRatePredictor(), batches });

// Every kind of the family, as a configuration builds it (a kind registered by a plugin included).
const settings: PredictorSettings = { hidden: [16], lr: 0.01, replaySteps: 2, useGold: true, questionFeatures: 'words', posterior: {} };
for (const kind of predictorKinds.entries())
  predictorContract(`${kind.name} (from the family)`, { make: () => kind.build(settings, { seed: 3, maxTurns: 6 }), batches });
