import type { Environment, Prompt } from '../env/types.ts';
import type { Policy } from '../policy/types.ts';
import { runStep } from '../rollout/index.ts';
import { rewardedLeaves } from '../tree/index.ts';
import type { Rng } from '../util/rng.ts';

/** Greedy success rate: one greedy rollout per prompt through the rollout engine (as the training loop evaluates). */
export async function greedyAccuracy(env: Environment<unknown>, policy: Policy, prompts: readonly Prompt[], rng: Rng, settings: { maxTurns?: number; concurrency?: number } = {}): Promise<number> {
  const result = await runStep({
    prompts: [...prompts],
    env,
    policy,
    
    rng,
    rootPlan: new Map(prompts.map((p) => [p.id, 1])),
    greedy: true,
    settings: { maxTurns: settings.maxTurns ?? 6, concurrency: settings.concurrency ?? 4 },
  });
  let solved = 0;
  for (const t of result.trees) solved += rewardedLeaves(t).reduce((s, l) => s + l.reward!, 0);
  return prompts.length > 0 ? solved / prompts.length : 0;
}
