/**
 * Grows rollout trees for the predictor benchmark with the rollout engine (src/rollout) and a fixed
 * allocation: m bare rollouts per prompt, then `continuations` branches per prompt from intermediate
 * prefixes of its bare rollouts drawn uniformly with replacement, as a TRACE step with random prefix
 * choice would. Works with any Environment + Policy pair. (Until issue 32 this was a loop of its own.)
 */
import type { Environment } from '../../src/env/types.ts';
import type { Policy } from '../../src/policy/types.ts';
import { runStep, type Allocator } from '../../src/rollout/index.ts';
import type { RolloutTree } from '../../src/tree/index.ts';
import type { Rng } from '../../src/util/rng.ts';
import type { Prompt } from '../../src/tree/types.ts';

export interface GrowOptions {
  m: number;
  continuations: number;
  rng: Rng;
  maxTurns: number;
}

/** m roots per prompt; `continuations` per prompt on uniformly drawn prefixes (K = times drawn). */
export function randomPrefixes(m: number, continuations: number): Allocator {
  return {
    cap: 1_000_000_000,
    roots: { plan: ({ candidates }) => new Map(candidates.map((c) => [c.promptId, m])) },
    prefixes: {
      continuationBudget: () => continuations,
      plan: ({ prefixes, budget, rng }) => {
        const k = new Map<string, number>();
        for (let j = 0; j < budget; j++) {
          const id = prefixes[rng.int(prefixes.length)]!.id;
          k.set(id, (k.get(id) ?? 0) + 1);
        }
        return k;
      },
    },
  };
}

/** One tree per prompt, in the order of `prompts`. */
export async function growTrees<S>(env: Environment<S>, policy: Policy, prompts: readonly Prompt[], opts: GrowOptions): Promise<RolloutTree[]> {
  const result = await runStep({
    prompts,
    env,
    policy,
    rng: opts.rng,
    strategy: randomPrefixes(opts.m, opts.continuations),
    settings: { maxTurns: opts.maxTurns },
  });
  return result.trees;
}
