import type { Prompt } from '../env/types.ts';
import type { Turn } from '../tree/types.ts';

/** A prefix history H(i, j, t): prompt i and the first t turns of a rollout (t = 0 is the root). */
export interface History {
  prompt: Prompt;
  turns: readonly Turn[];
}

/** One regression example: a node's history and its bottom-up target (success rate below it). */
export interface TargetSample {
  history: History;
  target: number;
  /** Number of rewarded leaves behind the target. */
  count: number;
}

/** The shared success predictor Ṽ(H): one model for all prompts and depths (TRACE-SPEC §2). */
export interface SuccessPredictor {
  readonly name: string;
  predict(histories: readonly History[]): number[];
  /** Online update on one step's targets; returns training metrics (e.g. final loss). */
  train(samples: readonly TargetSample[]): Record<string, number>;
  /** A self-contained snapshot; `load` of it predicts exactly as before. */
  save(): Uint8Array;
  load(snapshot: Uint8Array): void;
}
