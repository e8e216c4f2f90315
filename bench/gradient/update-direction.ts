import { forestFromTrees, type AdvantageEstimator } from '../../src/advantage/index.ts';
import { getNode, turnsTo, type RolloutTree } from '../../src/tree/index.ts';
import type { Prompt } from '../../src/tree/types.ts';
import type { ScoreGradients } from './score-gradient.ts';
import { SparseSum, type SparseVec } from './sparse.ts';

/** One prompt's part of a gradient: the whole, and the part from turns at each depth (index = depth − 1). */
export interface PromptGradient {
  promptId: string;
  total: SparseVec;
  byDepth: SparseVec[];
}

/**
 * An arm's one-step update direction, prompt by prompt: Σ over rewarded leaves ℓ and turns u on ℓ's
 * path of A_ℓ(u) ∇ log π(u), the gradient of the policy loss at the behaviour policy (ratio 1, so
 * PPO's clip is inactive), each leaf trained as its own sequence (`sharedTurns: per-leaf`, the
 * default). The trainer divides by the number of contributing turns; a positive scale never changes a
 * cosine, so it is left out. Zero advantages and NaN (no group) add nothing, as in the update.
 */
export function updateDirection(trees: readonly RolloutTree[], estimator: AdvantageEstimator, prompts: ReadonlyMap<string, Prompt>, grads: ScoreGradients, maxDepth: number): PromptGradient[] {
  const byPrompt = new Map(trees.map((t) => [t.promptId, t]));
  const sums = new Map<string, { total: SparseSum; byDepth: SparseSum[] }>();
  for (const leaf of estimator.estimate(forestFromTrees(trees))) {
    const promptId = leaf.path[0]!.split('/')[0]!;
    const tree = byPrompt.get(promptId)!;
    const prompt = prompts.get(promptId)!;
    const turns = turnsTo(tree, leaf.id);
    let s = sums.get(promptId);
    if (!s) sums.set(promptId, (s = { total: new SparseSum(), byDepth: Array.from({ length: maxDepth }, () => new SparseSum()) }));
    leaf.path.forEach((id, k) => {
      const a = leaf.turns[k]!;
      if (a === 0 || Number.isNaN(a)) return;
      const g = grads.at(prompt, turns, k);
      if (!g) return;
      s.total.add(g, a);
      s.byDepth[Math.min(getNode(tree, id).depth, maxDepth) - 1]!.add(g, a);
    });
  }
  return [...sums].map(([promptId, s]) => ({ promptId, total: s.total.finish(), byDepth: s.byDepth.map((d) => d.finish()) }));
}
