import type { Environment, KnowsTruth } from '../env/index.ts';
import { Simulator, WorldEnv } from '../env/index.ts';
import { EmbeddedPolicy, SimulatorPolicy, worldCandidateSource, type Policy, type TrainablePolicy } from '../policy/index.ts';
import { BetaBernoulliPredictor, GlobalRatePredictor, createFeatures, createMlpPredictor, type SuccessPredictor } from '../predict/index.ts';
import { initJax } from '../util/jax.ts';
import type { TrainConfig } from './config.ts';
import type { Prompt } from '../tree/types.ts';

/** Everything a run is made of, built from the configuration once. */
export interface Components {
  env: Environment<unknown>;
  /** Set when the environment knows exact success probabilities (the simulator). */
  truth?: KnowsTruth;
  train: Prompt[];
  test: Prompt[];
  policy: Policy;
  trainable?: TrainablePolicy;
  predictor: SuccessPredictor;
}

export async function buildComponents(config: TrainConfig): Promise<Components> {
  const predictor = await buildPredictor(config);
  const success = { rule: config.env.successRule, threshold: config.env.successThreshold };
  if (config.env.kind === 'simulator') {
    const sim = new Simulator({ seed: config.env.seed, maxTurns: config.engine.maxTurns });
    const all = sim.prompts(config.env.questions);
    const nTest = Math.max(1, Math.round(all.length * config.env.testFraction));
    return { env: sim as Environment<unknown>, truth: sim, train: all.slice(nTest), test: all.slice(0, nTest), policy: new SimulatorPolicy(sim), predictor };
  }
  const env = new WorldEnv({
    seed: config.env.seed,
    questions: config.env.questions,
    testFraction: config.env.testFraction,
    topK: config.env.topK,
    maxTurns: config.engine.maxTurns,
    success,
  });
  if (config.policy.kind === 'tiny-lm') {
    const policy = await buildTinyLm(config);
    return { env: env as Environment<unknown>, train: env.train, test: env.test, policy, trainable: policy, predictor };
  }
  const policy = new EmbeddedPolicy({ candidates: worldCandidateSource(env) });
  return { env: env as Environment<unknown>, train: env.train, test: env.test, policy, trainable: policy, predictor };
}

async function buildPredictor(config: TrainConfig): Promise<SuccessPredictor> {
  switch (config.predictor.kind) {
    case 'mlp':
      return createMlpPredictor({
        features: createFeatures({ hashed: { maxTurns: config.engine.maxTurns, useGold: config.predictor.useGold } }),
        hidden: config.predictor.hidden,
        lr: config.predictor.lr,
        replaySteps: config.predictor.replaySteps,
        seed: config.seed,
      });
    case 'beta':
      return new BetaBernoulliPredictor();
    case 'global':
      return new GlobalRatePredictor();
  }
}

/** The tiny LM from its GGUF (imported lazily: node-llama-cpp is heavy); the step passes its update settings. */
async function buildTinyLm(config: TrainConfig): Promise<TrainablePolicy> {
  const { readFileSync } = await import('node:fs');
  const { TinyLmPolicy } = await import('../tinylm/index.ts');
  await initJax();
  const file = config.policy.model!;
  return TinyLmPolicy.fromBytes(new Uint8Array(readFileSync(file)), {}, file);
}
