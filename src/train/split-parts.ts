/**
 * What a worker process of a split training step (engine.workers > 1) builds its parts from: the
 * run's configuration, rebuilt as the run built it, with the policy and predictor weights of this
 * step loaded from their checkpoint bytes. Loaded by src/rollout/split/worker-main.ts by file URL.
 */
import { strategyFromConfig } from '../allocate/index.ts';
import type { StepParts } from '../rollout/split/index.ts';
import { usePlugin } from '../util/plugins.ts';
import { buildComponents } from './components.ts';
import type { TrainConfig } from './config.ts';
import type { Prompt } from '../tree/types.ts';

/** What changes between two steps of a run: the weights (checkpoint bytes). */
export type StepWeights = Pick<TrainStepPartsArgs, 'policy' | 'predictor'>;

export interface TrainStepPartsArgs {
  config: TrainConfig;
  /** The policy's checkpoint (TrainablePolicy.save) at this step; absent for a policy nothing trains. */
  policy?: Uint8Array;
  /** The predictor's checkpoint (SuccessPredictor.save) at this step. */
  predictor: Uint8Array;
  /** Plugin modules the run's process loaded (file URLs): imported first, so their strategies and kinds exist here too. */
  plugins?: readonly string[];
  /** The coordinator's prompts, for an environment kind that takes them in its workers (EnvKind.forWorkers). */
  prompts?: { train: readonly Prompt[]; test: readonly Prompt[] };
}

export async function buildStepParts(args: unknown): Promise<StepParts> {
  const { config, policy, predictor, plugins = [], prompts } = args as TrainStepPartsArgs;
  for (const url of plugins) await usePlugin(url);
  // The checkpoint replaces the weights, so the behaviour-cloning warm start would be wasted work.
  const built = 'warmStart' in config.policy ? { ...config, policy: { ...config.policy, warmStart: 'none' } } : config;
  const parts = await buildComponents(built as TrainConfig, prompts ? { prompts } : {});
  if (policy) {
    if (!parts.trainable) throw new Error(`policy.kind ${config.policy.kind} built no trainable policy to load the step's checkpoint into`);
    parts.trainable.load(policy);
  }
  parts.predictor.load(predictor);
  const prefixes = strategyFromConfig(config.strategy).prefixes;
  return {
    env: parts.env,
    policy: parts.policy,
    scorer: (hs) => parts.predictor.predict(hs),
    ...(prefixes ? { prefixes } : {}),
    // Each later step of the run: that step's weights, the environment and the rest kept.
    update(args) {
      const next = args as StepWeights;
      if (next.policy) parts.trainable!.load(next.policy);
      parts.predictor.load(next.predictor);
    },
  };
}
