import type { AdvantageEstimator } from '../../src/advantage/index.ts';
import type { RolloutTree } from '../../src/tree/index.ts';
import { policySamples, type SharedTurns } from '../../src/train/policy-samples.ts';
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
 * An arm's one-step update direction, prompt by prompt: Σ over the samples the trainer would get
 * (`policySamples`: one per rewarded leaf, each turn's advantage after the leaf weighting `sharedTurns`)
 * and their turns u of A(u) ∇ log π(u), the gradient of the policy loss at the behaviour policy (ratio
 * 1, so PPO's clip is inactive). The trainer divides by a positive constant (policy.normalise), which
 * never changes a cosine, so it is left out. Zero advantages and NaN (no group) add nothing, as in the update.
 */
export function updateDirection(
  trees: readonly RolloutTree[],
  estimator: AdvantageEstimator,
  prompts: ReadonlyMap<string, Prompt>,
  grads: ScoreGradients,
  maxDepth: number,
  sharedTurns: SharedTurns = 'per-leaf',
): PromptGradient[] {
  const sums = new Map<string, { total: SparseSum; byDepth: SparseSum[] }>();
  for (const sample of policySamples(estimator, trees, [...prompts.values()], sharedTurns)) {
    const promptId = sample.prompt.id;
    let s = sums.get(promptId);
    if (!s) sums.set(promptId, (s = { total: new SparseSum(), byDepth: Array.from({ length: maxDepth }, () => new SparseSum()) }));
    sample.advantages.forEach((a, k) => {
      if (a === 0 || Number.isNaN(a)) return;
      const g = grads.at(sample.prompt, sample.turns, k);
      if (!g) return;
      s.total.add(g, a);
      // Turn k of a sample sits at depth k + 1 of its tree.
      s.byDepth[Math.min(k + 1, maxDepth) - 1]!.add(g, a);
    });
  }
  return [...sums].map(([promptId, s]) => ({ promptId, total: s.total.finish(), byDepth: s.byDepth.map((d) => d.finish()) }));
}
