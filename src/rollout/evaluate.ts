import type { Environment } from '../env/types.ts';
import type { Policy } from '../policy/types.ts';
import { rewardedLeaves, type Prompt } from '../tree/index.ts';
import type { Rng } from '../util/rng.ts';
import { runStep } from './engine.ts';
import type { EngineSettingsInput } from './settings.ts';

export interface GreedyAccuracyOptions {
  env: Environment<unknown>;
  policy: Policy;
  prompts: readonly Prompt[];
  /** The evaluation's random stream (greedy decoding ignores it; tools may not). */
  rng: Rng;
  /** Engine settings (turn limit, concurrency, retries); defaults as in `engineSettings`. */
  settings?: EngineSettingsInput;
  signal?: AbortSignal;
}

export interface SampledAccuracyOptions extends GreedyAccuracyOptions {
  /** Sampled rollouts per prompt (≥ 1). */
  samples: number;
}

/**
 * Greedy success rate: one greedy rollout per prompt through the rollout engine, no budget cap, and
 * the share of prompts whose trajectory was rewarded, Σ reward / #prompts (0 for no prompts). The
 * training loop's held-out evaluation and the benches both measure accuracy this way.
 */
export function greedyAccuracy(options: GreedyAccuracyOptions): Promise<number> {
  return meanReward(options, 1, true);
}

/**
 * Sampled success rate: `samples` rollouts per prompt drawn as in training (the policy's own sampling,
 * at its temperature), Σ reward / (#prompts · samples). It estimates the mean of the policy's success
 * probabilities over the prompts: what RL maximises, and what moves first when RL reshapes the
 * sampling distribution without changing its argmax.
 */
export async function sampledAccuracy(options: SampledAccuracyOptions): Promise<number> {
  if (!Number.isInteger(options.samples) || options.samples < 1) throw new RangeError(`sampledAccuracy: samples must be an integer ≥ 1, got ${options.samples}`);
  return meanReward(options, options.samples, false);
}

async function meanReward(options: GreedyAccuracyOptions, perPrompt: number, greedy: boolean): Promise<number> {
  const { prompts } = options;
  const result = await runStep({
    prompts: [...prompts],
    env: options.env,
    policy: options.policy,
    rng: options.rng,
    rootPlan: new Map(prompts.map((p) => [p.id, perPrompt])),
    greedy,
    settings: options.settings,
    signal: options.signal,
  });
  let solved = 0;
  for (const t of result.trees) solved += rewardedLeaves(t).reduce((s, l) => s + l.reward!, 0);
  return prompts.length > 0 ? solved / (prompts.length * perPrompt) : 0;
}
