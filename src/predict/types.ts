import type { Prompt, Turn } from '../tree/types.ts';
import type { FeatureMatrix } from './feature-matrix.ts';

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
  /** Where the node sits: the root (t = 0), an intermediate prefix, or a leaf (ended trajectory). */
  kind?: NodeKind;
  /** The tree node the sample came from (for joining with stored trees). */
  nodeId?: string;
}

export type NodeKind = 'root' | 'prefix' | 'leaf';

/** The shared success predictor Ṽ(H): one model for all prompts and depths (TRACE-SPEC §2). */
export interface SuccessPredictor {
  readonly name: string;
  predict(histories: readonly History[]): number[];
  /**
   * Optional asynchronous preparation (e.g. fetching embeddings) for histories that `predict` or
   * `train` will see next. Predictors whose features are synchronous omit it; callers always
   * `await predictor.prepare?.(histories)` before predict/train when features may be remote.
   */
  prepare?(histories: readonly History[]): Promise<void>;
  /** Online update on one step's targets; returns training metrics (e.g. final loss). */
  train(samples: readonly TargetSample[]): Record<string, number>;
  /** A self-contained snapshot; `load` of it predicts exactly as before. */
  save(): Uint8Array;
  load(snapshot: Uint8Array): void;
  /** Frees what it holds outside the JS heap (the MLP: jax-js arrays); train() calls it when it ends. */
  dispose?(): void;
}

/**
 * Turns histories into feature rows. `encode` is synchronous; extractors that need remote data
 * (embeddings) fetch it in `prepare` and throw a named error when asked for an unprepared history.
 * `signature` names the configuration, so a saved model refuses features of another shape.
 */
export interface FeatureExtractor {
  readonly dim: number;
  readonly signature: string;
  prepare?(histories: readonly History[]): Promise<void>;
  encode(histories: readonly History[]): FeatureMatrix;
}
