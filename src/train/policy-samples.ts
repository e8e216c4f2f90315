import { forestFromTrees, importanceWeighted, leafPrompts, type AdvantageEstimator, type LeafAdvantage } from '../advantage/index.ts';
import type { PolicySample } from '../policy/index.ts';
import { getNode, turnsTo, type RolloutTree } from '../tree/index.ts';
import type { Prompt } from '../tree/types.ts';

/**
 * The step's advantages: the estimator's, each leaf's times its tree's importance weight (the root's
 * `weight`, set by a strategy that draws prompts unevenly: defensive), so the update and the stored rows
 * estimate the uniform objective over the candidates.
 */
export function stepAdvantages(estimator: AdvantageEstimator, trees: readonly RolloutTree[]): LeafAdvantage[] {
  return importanceWeighted(estimator.estimate(forestFromTrees(trees)), trees);
}

/**
 * One sample per rewarded leaf: the turns from the root and their advantages. With sharedTurns
 * `once`, a node already in an earlier leaf's sample gets advantage 0 there (the policy skips zero
 * advantages), so every tree node is one term of the loss; only valid for per-node advantages (trace).
 * With `importance`, each leaf's advantages are scaled by Π 1/children over the branch points on its
 * path below the root (the turn nodes a continuation was restored from), so the leaves grown from one
 * bare rollout weigh, together, as that one rollout would: the tree then estimates the policy gradient
 * of the rollouts it started from instead of over-counting the expanded prefixes.
 */
export function policySamples(
  estimator: AdvantageEstimator,
  trees: readonly RolloutTree[],
  pool: readonly Prompt[],
  sharedTurns: SharedTurns = 'per-leaf',
): PolicySample[] {
  return samplesOf(stepAdvantages(estimator, trees), trees, pool, sharedTurns);
}

export function samplesOf(
  advantages: readonly LeafAdvantage[],
  trees: readonly RolloutTree[],
  pool: readonly Prompt[],
  sharedTurns: SharedTurns,
): PolicySample[] {
  const prompts = new Map(pool.map((p) => [p.id, p]));
  const byPrompt = new Map(trees.map((t) => [t.promptId, t]));
  const seen = sharedTurns === 'once' ? new Set<string>() : undefined;
  const samples: PolicySample[] = [];
  const promptOf = leafPrompts(advantages, trees);
  for (const adv of advantages) {
    const promptId = promptOf.get(adv.id)!;
    const tree = byPrompt.get(promptId)!;
    const w = sharedTurns === 'importance' ? leafWeight(tree, adv.path) : 1;
    const advantages = seen
      ? adv.turns.map((a, i) => (seen.has(adv.path[i]) ? 0 : (seen.add(adv.path[i]), a)))
      : w === 1
        ? adv.turns
        : adv.turns.map((a) => a * w);
    samples.push({ prompt: prompts.get(promptId)!, turns: turnsTo(tree, adv.id), advantages });
  }
  return samples;
}

export type SharedTurns = 'per-leaf' | 'once' | 'importance';

/** Π 1/children over the turn nodes of a leaf's path that have more than one child (its branch points). */
export function leafWeight(tree: RolloutTree, path: readonly string[]): number {
  let w = 1;
  for (const id of path) {
    const n = getNode(tree, id).children.length;
    if (n > 1) w /= n;
  }
  return w;
}
