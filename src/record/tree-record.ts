import type { AdvantageScale, LeafAdvantage } from '../advantage/index.ts';

/**
 * What a step stores for each tree beside the tree itself, so that readers (export, the rollout
 * service's batches) need neither the environment nor the estimator's configuration. The token ids a
 * policy returned are already on the tree's turns; no policy returns the prompt's ids, so the prompt is
 * stored as the text the policy saw and tokenised by whoever exports it.
 */
export interface TreeRecord {
  promptId: string;
  /** Environment.render(prompt): the text the policy saw at the root. */
  rendered: string;
  /** The run's estimator's output for this tree's rewarded leaves, in the estimator's order. */
  advantages: StoredAdvantages;
}

export interface StoredAdvantages {
  estimator: string;
  scale?: AdvantageScale;
  leaves: LeafAdvantage[];
}
