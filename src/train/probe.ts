import type { Outcomes } from '../allocate/index.ts';
import type { Environment } from '../env/types.ts';
import type { Policy } from '../policy/index.ts';
import { runStep } from '../rollout/index.ts';
import type { EngineSettingsInput } from '../rollout/settings.ts';
import { rewardedLeaves, type Prompt } from '../tree/index.ts';
import type { Rng } from '../util/rng.ts';

/**
 * The oracle's probe where the environment does not know the truth (the world, math-world): k fresh
 * bare rollouts of every candidate under the current policy, outside the budget and never trained on,
 * so the oracle sees each prompt's p through k outcomes drawn now — what `truthSamples: k` draws from
 * the exact p in the simulator. A measuring instrument for root headroom (how much any choice of prompts
 * could gain with that much fresh evidence), not an allocator: its rollouts cost k · pool a step.
 */
export async function probeOutcomes(o: {
  prompts: readonly Prompt[];
  env: Environment;
  policy: Policy;
  samples: number;
  rng: Rng;
  settings: EngineSettingsInput;
  signal?: AbortSignal;
}): Promise<{ outcomes: Map<string, Outcomes>; tokens: number }> {
  const result = await runStep({
    prompts: o.prompts,
    env: o.env,
    policy: o.policy,
    rng: o.rng,
    rootPlan: new Map(o.prompts.map((p) => [p.id, o.samples])),
    settings: o.settings,
    ...(o.signal ? { signal: o.signal } : {}),
  });
  const outcomes = new Map<string, Outcomes>();
  for (const tree of result.trees) {
    const leaves = rewardedLeaves(tree);
    // A rollout that failed (timeout, server error) has no reward: it is no evidence either way.
    outcomes.set(tree.promptId, { successes: leaves.reduce((s, l) => s + l.reward!, 0), trials: leaves.length });
  }
  return { outcomes, tokens: result.spend.tokens };
}
