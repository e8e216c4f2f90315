import { createEstimator, type AdvantageEstimator } from '../advantage/index.ts';
import { WorldEnv, demoNoise, type Environment, type KnowsTruth } from '../env/index.ts';
import { EmbeddedPolicy, type Policy, type TrainablePolicy } from '../policy/index.ts';
import { BetaBernoulliPredictor, GlobalRatePredictor, createFeatures, createMlpPredictor, type SuccessPredictor } from '../predict/index.ts';
import { initJax } from '../util/jax.ts';
import { ConfigError, type TrainConfig } from './config.ts';
import { buildEnvironment } from './environments.ts';
import type { Prompt } from '../tree/types.ts';
import { warmStart } from './warm-start.ts';

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
  const setup = buildEnvironment(config);
  const { env, train, test, truth } = setup;
  if (setup.fixedPolicy) return { env, truth, train, test, policy: setup.fixedPolicy, predictor };
  if (config.policy.kind === 'scripted') {
    if (!setup.scripted) throw new ConfigError(`config.policy.kind: scripted is a fixed noisy policy that env.kind ${config.env.kind} does not have (math-world has one)`);
    return { env, train, test, policy: setup.scripted, predictor };
  }
  if (config.policy.kind === 'tiny-lm') {
    const policy = await buildTinyLm(config);
    return { env, train, test, policy, trainable: policy, predictor };
  }
  if (!setup.candidates) throw new ConfigError(`config.policy.kind: the embedded policy has no candidate actions in env.kind ${config.env.kind}${setup.needsText ? ' (it needs a policy that writes text: policy.kind tiny-lm, or an OpenAI-compatible server through trace-rl rollout / eval)' : ''}`);
  const policy = new EmbeddedPolicy({ candidates: setup.candidates });
  // The behaviour-cloning warm start needs the world's scripted demonstrator: world only.
  if (config.policy.warmStart === 'bc' && env instanceof WorldEnv) {
    const { seed, ...bc } = config.policy.bc;
    // The late world profile starts sparser: a noisier demonstrator (src/env/world/profile.ts).
    const settings = { ...bc, noise: demoNoise(env.profile, bc.noise) };
    await warmStart(policy, env, { seed, env: { ...config.env, maxTurns: config.engine.maxTurns }, settings, dim: policy.dim }, options.cacheDir);
  }
  return { env, train, test, policy, trainable: policy, predictor };
}

/**
 * The run's advantage estimator: its name with its scale. The one place a configuration becomes an
 * estimator, so the training loop, the rollout service's batches and `trace-rl export` cannot disagree
 * on `advantageScale` (the service once dropped it).
 */
export function estimatorFromConfig(config: Pick<TrainConfig, 'estimator' | 'advantageScale'>): AdvantageEstimator {
  return createEstimator(config.estimator, { scale: config.advantageScale });
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
  const { sequencesFor, TinyLmPolicy } = await import('../tinylm/index.ts');
  const { checkGgufFile, GgufFileError } = await import('../tinylm/gguf-file.ts');
  const file = config.policy.model!;
  try {
    checkGgufFile(file);
  } catch (e) {
    if (e instanceof GgufFileError) throw new ConfigError(`policy.model (--model) ${file}: ${e.message}`);
    throw e;
  }
  await initJax();
  // One llama.cpp sequence per policy call the rollout engine keeps in flight, decoded in one batch.
  return TinyLmPolicy.fromBytes(new Uint8Array(readFileSync(file)), { sequences: sequencesFor(config.engine.concurrency), temperature: config.policy.temperature }, file);
}
