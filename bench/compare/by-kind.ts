import { runStep } from '../../src/rollout/index.ts';
import { RunStore } from '../../src/store/index.ts';
import { buildComponents, storedTrainConfig } from '../../src/train/index.ts';
import { rewardedLeaves } from '../../src/tree/index.ts';
import { createRng } from '../../src/util/rng.ts';
import type { Prompt } from '../../src/tree/types.ts';

/** A world question's kind (bridge, comparison, …), '?' for prompts that carry none. */
export function questionKind(p: Prompt): string {
  return String((p.meta?.world as { kind?: string } | undefined)?.kind ?? '?');
}

/**
 * Held-out greedy accuracy of a run's final policy, split by question kind: the same evaluation the
 * loop logs (first eval.questions test prompts, one greedy rollout each), read back from the last
 * policy checkpoint. Also the mean number of turns per rollout (how often the policy searches first).
 */
export async function accuracyByKind(dir: string): Promise<Map<string, { n: number; solved: number; turns: number }>> {
  const store = RunStore.open(dir, { readonly: true });
  let config;
  let policy: Uint8Array | undefined;
  try {
    config = storedTrainConfig(store);
    policy = store.checkpoints(store.lastStep()).policy;
  } finally {
    store.close();
  }
  const parts = await buildComponents(config);
  if (!parts.trainable || !policy) throw new Error(`${dir}: no trainable policy checkpoint`);
  parts.trainable.load(policy);
  const prompts = parts.test.slice(0, config.eval.questions);
  const result = await runStep({
    prompts,
    env: parts.env,
    policy: parts.policy,
    rng: createRng(config.seed).fork('by-kind'),
    rootPlan: new Map(prompts.map((p) => [p.id, 1])),
    greedy: true,
    settings: config.engine,
  });
  const kindOf = new Map(prompts.map((p) => [p.id, questionKind(p)]));
  const out = new Map<string, { n: number; solved: number; turns: number }>();
  for (const tree of result.trees) {
    const k = kindOf.get(tree.promptId) ?? '?';
    const row = out.get(k) ?? { n: 0, solved: 0, turns: 0 };
    for (const leaf of rewardedLeaves(tree)) {
      row.n++;
      row.solved += leaf.reward!;
      row.turns += leaf.depth;
    }
    out.set(k, row);
  }
  return out;
}
