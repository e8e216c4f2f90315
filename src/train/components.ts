import type { Environment, KnowsTruth, Prompt } from '../env/index.ts';
import { Simulator, SimulatorPolicy, WorldEnv } from '../env/index.ts';
import { EmbeddedPolicy, worldCandidateSource, type PolicySample, type UpdateMetrics } from '../policy/index.ts';
import type { Policy } from '../policy/types.ts';
import { BetaBernoulliPredictor, GlobalRatePredictor, createFeatures, createMlpPredictor, type SuccessPredictor } from '../predict/index.ts';
import type { TrainConfig } from './config.ts';
import { warmStart } from './warm-start.ts';

/** A policy the loop can improve and checkpoint. The simulator's policy is fixed and has no update. */
export interface TrainablePolicy extends Policy {
  update(samples: readonly PolicySample[], options: { learningRate: number; clip: number; epochs: number }): UpdateMetrics | Promise<UpdateMetrics>;
  save(): Uint8Array;
  load(snapshot: Uint8Array): void;
}

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

export interface BuildOptions {
  /** Where warm starts are cached (default: $TRACE_RL_CACHE or ~/.cache/trace-rl). */
  cacheDir?: string;
}

export async function buildComponents(config: TrainConfig, options: BuildOptions = {}): Promise<Components> {
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
  if (config.policy.warmStart === 'bc') {
    const { seed, ...settings } = config.policy.bc;
    await warmStart(policy, env, { seed, env: { ...config.env, maxTurns: config.engine.maxTurns }, settings, dim: policy.dim }, options.cacheDir);
  }
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

/** The tiny LM from its GGUF, updated with policy.lmLearningRate (imported lazily: node-llama-cpp is heavy). */
async function buildTinyLm(config: TrainConfig): Promise<TrainablePolicy> {
  const { readFileSync } = await import('node:fs');
  const { TinyLmPolicy, initTinyLm } = await import('../tinylm/index.ts');
  await initTinyLm();
  const file = config.policy.model!;
  return TinyLmPolicy.fromBytes(new Uint8Array(readFileSync(file)), { learningRate: config.policy.lmLearningRate }, file);
}
