import { createEstimator, type AdvantageEstimator } from '../advantage/index.ts';
import type { Environment, KnowsTruth } from '../env/types.ts';
import { WorldEnv, demoNoise } from '../env/world/index.ts';
import type { EmbeddedPolicy } from '../policy/embedded/index.ts';
import { envFixedPolicy } from '../policy/env-policies.ts';
import { buildPolicy } from '../policy/registry.ts';
import type { Policy, TrainablePolicy } from '../policy/types.ts';
import { predictorKinds, type SuccessPredictor } from '../predict/index.ts';
import { ConfigError, type TrainConfig } from './config.ts';
import { buildEnvironment } from './environments.ts';
import type { Prompt } from '../tree/types.ts';
import type { SetupRefusals } from '../record/setup-refusals.ts';
import { noTaskFits, promptsThatFit, tooLongLine } from './prompt-fit.ts';
import { warmStart } from './warm-start.ts';
import type { EnvironmentSetup } from './environments.ts';

/** Everything a run is made of, built from the configuration once. */
export interface Components {
  env: Environment<unknown>;
  train: Prompt[];
  test: Prompt[];
  policy: Policy;
  trainable?: TrainablePolicy;
  predictor: SuccessPredictor;
  /**
   * Set when the exact success probabilities are the run's own policy's (policy.kind
   * simulator-tabular): `env` then knows them, and the held-out evaluation logs exact J from it.
   */
  truth?: KnowsTruth;
  /** The tasks setup skipped (refused by the server, too long for the policy's context); absent when none was. */
  setupRefusals?: SetupRefusals;
}

export interface BuildOptions {
  /** Where warm starts are cached (default: $TRACE_RL_CACHE or ~/.cache/trace-rl). */
  cacheDir?: string;
  /** A policy trained elsewhere (the rollout service's server): used as given, nothing here trains it. */
  policy?: Policy;
  /** A rollout worker's: the coordinator's prompts, which a kind with forWorkers takes instead of fetching them again. */
  prompts?: { train: readonly Prompt[]; test: readonly Prompt[] };
}

/** The run's environment, predictor and policy (src/env and src/policy registries), the policy warm-started when configured. */
export async function buildComponents(config: TrainConfig, options: BuildOptions = {}): Promise<Components> {
  if (config.policy.kind === 'openai' && !options.policy)
    throw new ConfigError(
      'config.policy.kind: openai is a server whose weights trace-rl train cannot update; serve its rollouts to an external trainer with trace-rl rollout (docs/export.md)',
    );
  const predictor = await buildPredictor(config);
  const setup = await buildEnvironment(config, options.prompts);
  // A policy trained elsewhere, else the policy of an environment that the configured kind does not replace (the simulator, BFCL): used untrained.
  const given = options.policy ?? envFixedPolicy(config.env.kind, setup, config.policy.kind);
  if (given) return { env: setup.env, ...(await fitToContext(given, setup.env, setup, config)), policy: given, predictor };
  const built = await buildPolicy(config.policy, { envKind: config.env.kind, setup, concurrency: config.engine.concurrency }, config.env);
  const { policy, trainable } = built;
  // A policy that changes what the environment knows (the simulator's truth, under the learnable policy).
  const env = built.env ?? setup.env;
  let fitted;
  try {
    fitted = await fitToContext(policy, env, setup, config);
  } catch (e) {
    // No run owns the policy yet: what it holds outside the heap (llama.cpp) is freed here.
    await trainable?.dispose?.('errored');
    throw e;
  }
  // The behaviour-cloning warm start needs the world's scripted demonstrator: world only.
  if (config.policy.kind === 'embedded' && trainable && config.policy.warmStart === 'bc' && env instanceof WorldEnv)
    await bcWarmStart(trainable as EmbeddedPolicy, env, config, options.cacheDir);
  return { env, ...fitted, policy, ...(trainable ? { trainable } : {}), predictor, ...(built.env ? { truth: built.env as unknown as KnowsTruth } : {}) };
}

/** Tasks the server refused at setup are counted; those whose prompt leaves no room for a first turn in the policy's context are skipped, named and counted (train/prompt-fit.ts). */
async function fitToContext(
  policy: Policy,
  env: Environment<unknown>,
  setup: EnvironmentSetup,
  config: TrainConfig,
): Promise<Pick<Components, 'train' | 'test' | 'setupRefusals'>> {
  const where = `env.kind ${config.env.kind}`;
  const turn = config.engine.maxTokensPerTurn;
  const render = (p: Prompt) => env.render(p);
  const train = await promptsThatFit(policy, setup.train, render, turn);
  const test = await promptsThatFit(policy, setup.test, render, turn);
  const tooLong = [...train.tooLong, ...test.tooLong];
  const of = setup.skipped?.of ?? setup.train.length + setup.test.length;
  if (tooLong.length > 0) process.stderr.write(`trace-rl: ${tooLongLine(tooLong, of, where, policy.name, turn)}\n`);
  if (train.kept.length === 0 && train.tooLong.length > 0) throw noTaskFits(train.tooLong, where, policy.name, turn);
  const server = setup.skipped?.refused ?? 0;
  const named = tooLong.slice(0, 8).map((t) => ({ id: t.prompt.id, tokens: t.fit.tokens, context: t.fit.context }));
  return {
    train: train.kept,
    test: test.kept,
    ...(server + tooLong.length > 0 ? { setupRefusals: { tasks: of, server, context: tooLong.length, named } } : {}),
  };
}

/**
 * The behaviour-cloning warm start an embedded policy on the world starts RL from (seeded by
 * policy.bc.seed, cached by a hash of what determines it): training and `trace-rl diagnose --warm-start`
 * both start from exactly these weights.
 */
export async function bcWarmStart(policy: EmbeddedPolicy, env: WorldEnv, config: TrainConfig, cacheDir?: string): Promise<{ cached: boolean }> {
  if (config.policy.kind !== 'embedded') throw new Error('bcWarmStart: the warm start is for the embedded policy');
  const { seed, ...bc } = config.policy.bc;
  // The late world profile starts sparser: a noisier demonstrator (src/env/world/profile.ts).
  const settings = { ...bc, noise: demoNoise(env.profile, bc.noise) };
  return warmStart(policy, env, { seed, env: { ...config.env, maxTurns: config.engine.maxTurns }, settings, dim: policy.dim }, cacheDir);
}

/**
 * Fits and caches the warm start a run will start from, when it has one (the embedded policy on the
 * world with policy.warmStart: bc), and says whether it had to fit it. Runs started together each fit a
 * start they do not find: `compare` calls this first, so its first --jobs runs read one fit instead
 * of each computing the same one (≈ 13 CPU-s apiece at the default world's size).
 */
export async function cacheWarmStart(config: TrainConfig, cacheDir?: string): Promise<{ fitted: boolean }> {
  if (config.env.kind !== 'world' || config.policy.kind !== 'embedded' || config.policy.warmStart !== 'bc') return { fitted: false };
  const setup = await buildEnvironment(config);
  const built = await buildPolicy(config.policy, { envKind: config.env.kind, setup, concurrency: config.engine.concurrency }, config.env);
  if (!built.trainable || !(setup.env instanceof WorldEnv)) return { fitted: false };
  const { cached } = await bcWarmStart(built.trainable as EmbeddedPolicy, setup.env, config, cacheDir);
  return { fitted: !cached };
}

/**
 * The run's advantage estimator: its name with its scale. The one place a configuration becomes an
 * estimator, so the training loop, the rollout service's batches and `trace-rl export` cannot disagree
 * on `advantageScale` (the service once dropped it).
 */
export function estimatorFromConfig(config: Pick<TrainConfig, 'estimator' | 'advantageScale'>): AdvantageEstimator {
  return createEstimator(config.estimator, { scale: config.advantageScale });
}

function buildPredictor(config: TrainConfig): Promise<SuccessPredictor> | SuccessPredictor {
  const { kind, ...settings } = config.predictor;
  return predictorKinds.get(kind).build(settings, { seed: config.seed, maxTurns: config.engine.maxTurns });
}
