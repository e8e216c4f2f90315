/**
 * What an evaluation measures per question, one entry per environment kind. An entry lists its metric
 * columns (table order) and turns a finished trajectory into one number per column. Answer-shaped
 * environments (qa, world) report the official EM and F1 of the final `<answer>` beside `accuracy`,
 * the environment's own success reward, which is all any other kind reports. Adding an environment
 * kind to evaluation is one entry here (the environment itself comes from src/env/registry.ts; what
 * training logs of it, from src/eval/held-out.ts).
 */
import { scoreAnswer } from '../env/qa-metrics.ts';
import type { Prompt } from '../tree/types.ts';
import type { EndReason } from '../tree/types.ts';

/** How one trajectory ended: its final answer (when it gave one), reward and end reason. */
export interface TrajectoryOutcome {
  answer?: string;
  reward?: number;
  end?: EndReason;
}

export interface EvalKind {
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
export const ANSWER_METRICS: EvalKind = {
  metrics: ['em', 'f1', 'accuracy'],
  score(prompt, outcome) {
    const accuracy = outcome.reward === 1 ? 1 : 0;
    if (outcome.answer === undefined) return { em: 0, f1: 0, accuracy };
    const s = scoreAnswer(outcome.answer, prompt.answers);
    return { em: s.em, f1: s.f1, accuracy };
  },
};

/** The environment's own success reward (1 or 0); a trajectory that ended without one scores 0. */
export const ACCURACY: EvalKind = {
  metrics: ['accuracy'],
  score: (_prompt, outcome) => ({ accuracy: outcome.reward === 1 ? 1 : 0 }),
};

export const EVAL_KINDS: Record<string, EvalKind> = {
  qa: ANSWER_METRICS,
  world: ANSWER_METRICS,
  simulator: ACCURACY,
  bfcl: ACCURACY,
};

/** The entry for a kind; kinds without one are scored by their reward (`accuracy`). */
export function evalKind(kind: string): EvalKind {
  return EVAL_KINDS[kind] ?? ACCURACY;
}
