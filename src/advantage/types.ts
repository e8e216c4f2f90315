/**
 * Shared shapes of the advantage estimators. Every estimator reads one small internal form — a
 * forest of nodes with parent links, rewards on leaves and generated-token lengths — that both the
 * project's RolloutTree and the CLI's flat JSON forest convert into, so each formula exists once.
 */

/** One node of the input forest, as given by a caller (before validation and indexing). */
export interface ForestNode {
  id: string;
  /** Null for a prompt (a root). */
  parent: string | null;
  /** Terminal reward of a finished leaf. Absent on inner nodes and on failed trajectories. */
  reward?: number;
  /**
   * Generated tokens of the whole trajectory ending at this leaf (what a trainer would see as the
   * leaf's response). Only leaves carry it; default 1.
   */
  length?: number;
}

/**
 * The validated, indexed forest every estimator works on. Indices are positions in `ids`; `order` lists
 * every node parents-before-children, so one forward pass sees ancestors first and one backward pass
 * aggregates subtrees.
 */
export interface Forest {
  ids: readonly string[];
  /** Parent index, −1 for a root. */
  parent: readonly number[];
  children: readonly (readonly number[])[];
  /** Reward of a rewarded leaf; undefined elsewhere. */
  reward: readonly (number | undefined)[];
  /** Trajectory token count for leaves (default 1); 0 for inner nodes. */
  length: readonly number[];
  roots: readonly number[];
  /** Topological order: parents before children, roots in input order. */
  order: readonly number[];
  /** Rewarded leaves in input order: the leaves every estimator reports. */
  rewardedLeaves: readonly number[];
}

/** The advantage of one rewarded leaf. */
export interface LeafAdvantage {
  id: string;
  /** One scalar per leaf (for `trace`, the value of the leaf's own turn, its deepest comparison). */
  advantage: number;
  /** Node ids from the prompt (exclusive) down to the leaf (inclusive), like `pathTo(tree, leaf)`. */
  path: string[];
  /** One advantage per entry of `path`: the credit of that turn when trained inside this leaf's sequence. */
  turns: number[];
}

/** The built-in estimators' names; the family (registry.ts) holds them, each with what is specific to it. */
export type EstimatorName = 'grpo' | 'tree-grpo' | 'treepo' | 'trace' | 'trace-local';

/** One advantage estimator: a batch forest in, one record per rewarded leaf out (in input order). */
export interface AdvantageEstimator {
  readonly name: EstimatorName;
  estimate(forest: Forest): LeafAdvantage[];
}
