/**
 * What an evaluation measures per trajectory: metric columns (table order) and one number per column
 * for a finished trajectory. Each environment kind names its own (`EnvKind.metrics`); these are the
 * two the built-in kinds share. They live beside the environments, below evaluation, because a kind
 * declares them.
 */
import type { EndReason, Prompt } from '../tree/types.ts';
import { scoreAnswer } from './qa/qa-metrics.ts';

/** How one trajectory ended: its final answer (when it gave one), reward and end reason. */
export interface TrajectoryOutcome {
  answer?: string;
  reward?: number;
  end?: EndReason;
}

export interface TrajectoryMetrics {
  /** Metric columns, in table order. */
  readonly metrics: readonly string[];
  /** One value per metric for one trajectory; a trajectory without an answer scores 0. */
  score(prompt: Prompt, outcome: TrajectoryOutcome): Record<string, number>;
}

/**
 * EM and F1 of the final answer against the gold answers (max over golds), as the official scripts,
 * and `accuracy`, the environment's own success reward: what training logs as test_accuracy (the
 * success rule, e.g. F1 ≥ 0.3, counts answers EM does not).
 */
export const ANSWER_METRICS: TrajectoryMetrics = {
  metrics: ['em', 'f1', 'accuracy'],
  score(prompt, outcome) {
    const accuracy = outcome.reward === 1 ? 1 : 0;
    if (outcome.answer === undefined) return { em: 0, f1: 0, accuracy };
    const s = scoreAnswer(outcome.answer, prompt.answers);
    return { em: s.em, f1: s.f1, accuracy };
  },
};

/** The environment's own success reward (1 or 0); a trajectory that ended without one scores 0. */
export const ACCURACY: TrajectoryMetrics = {
  metrics: ['accuracy'],
  score: (_prompt, outcome) => ({ accuracy: outcome.reward === 1 ? 1 : 0 }),
};
