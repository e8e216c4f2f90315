import { defineFamily, type FamilyEntry } from '../util/family.ts';
import type { PosteriorOptions } from './posterior.ts';
import type { SuccessPredictor } from './types.ts';

/** What every predictor kind is built from: the run's predictor settings, its seed and its turn limit. */
export interface PredictorSettings {
  hidden: number[];
  lr: number;
  replaySteps: number;
  useGold: boolean;
  questionFeatures: 'words' | 'template';
  posterior: PosteriorOptions;
}

/** One predictor kind: its name, what it is (the configuration reference), and its constructor. */
export interface PredictorKind extends FamilyEntry {
  readonly description: string;
  build(settings: PredictorSettings, run: { seed: number; maxTurns: number }): Promise<SuccessPredictor> | SuccessPredictor;
}

// Each kind's code (the network's, and jax-js under it) loads only when the kind is built: the
// configuration schema, which reads this family's names, is loaded by every command that parses a
// configuration, `trace-rl config` among them.
const mlp = async (s: PredictorSettings, run: { seed: number; maxTurns: number }) => {
  const [{ createMlpPredictor }, { createFeatures }] = await Promise.all([import('./mlp-predictor.ts'), import('./features.ts')]);
  return createMlpPredictor({
    features: createFeatures({ hashed: { maxTurns: run.maxTurns, useGold: s.useGold, questionFeatures: s.questionFeatures } }),
    hidden: s.hidden,
    lr: s.lr,
    replaySteps: s.replaySteps,
    seed: run.seed,
  });
};

/** The predictor family: the name → implementation choice happens here, once, at configuration time. */
export const predictorKinds = defineFamily<PredictorKind>('predictor kind', [
  { name: 'mlp', description: 'the shared learned predictor Ṽ(H)', build: mlp },
  {
    name: 'posterior',
    description: 'the mlp as the prior of a per-prompt posterior from the prompt’s own earlier root outcomes (predictor.posterior; docs/predictor.md)',
    build: async (s, run) => new (await import('./posterior.ts')).PosteriorPredictor(await mlp(s, run), s.posterior),
  },
  { name: 'beta', description: 'per-prompt Beta-Bernoulli (roots only)', build: async () => new (await import('./baselines.ts')).BetaBernoulliPredictor() },
  { name: 'global', description: 'the running success rate', build: async () => new (await import('./baselines.ts')).GlobalRatePredictor() },
]);
