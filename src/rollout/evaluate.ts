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

/**
 * Greedy success rate: one greedy rollout per prompt through the rollout engine, no budget cap, and
 * the share of prompts whose trajectory was rewarded, Σ reward / #prompts (0 for no prompts). The
 * training loop's held-out evaluation and the benches both measure accuracy this way.
 */
export async function greedyAccuracy(options: GreedyAccuracyOptions): Promise<number> {
  const { prompts } = options;
  const result = await runStep({
    prompts: [...prompts],
    env: options.env,
    policy: options.policy,
    rng: options.rng,
    rootPlan: new Map(prompts.map((p) => [p.id, 1])),
    greedy: true,
    settings: options.settings,
    signal: options.signal,
  });
  let solved = 0;
  for (const t of result.trees) solved += rewardedLeaves(t).reduce((s, l) => s + l.reward!, 0);
  return prompts.length > 0 ? solved / prompts.length : 0;
}
