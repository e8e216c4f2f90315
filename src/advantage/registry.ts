import type { AdvantageScale } from './group-stats.ts';
import { createGrpo } from './grpo.ts';
import { createTrace, createTraceLocal } from './trace.ts';
import { createTreeGrpo } from './tree-grpo.ts';
import { createTreepo } from './treepo.ts';
import type { AdvantageEstimator, EstimatorName } from './types.ts';
import { defineFamily } from '../util/family.ts';

/** Raised when a configuration names an estimator that does not exist. */
export class UnknownEstimatorError extends Error {
  override name = 'UnknownEstimatorError';
  constructor(readonly requested: string) {
    super(`unknown advantage estimator "${requested}"; choose one of: ${estimators.names().join(', ')}`);
  }
}

export interface EstimatorOptions {
  /** Overrides the estimator's ε (grpo, tree-grpo, trace, trace-local: 1e-6 in the denominator; treepo: 1e-8 in the whitening root). */
  epsilon?: number;
  /**
   * grpo, tree-grpo, trace, trace-local: divide group deviations by the group std (`std`, default) or not (`none`,
   * Dr. GRPO). treepo whitens over the batch's tokens by definition and accepts only `std`.
   */
  scale?: AdvantageScale;
}

/**
 * One estimator: its constructor, when some advantage scale would not be that estimator any more, why
 * (`scaleProblem`), and whether its advantages are per node (`perNode`: a shared turn has one value in
 * every leaf through it, so per-turn output and `sharedTurns: once` are well defined; the others
 * broadcast one scalar per leaf).
 */
export interface EstimatorEntry {
  name: EstimatorName;
  build(options: EstimatorOptions): AdvantageEstimator;
  scaleProblem?(scale: AdvantageScale): string | undefined;
  perNode?: true;
}

/** The estimator family, picked by name once, at configuration time. */
export const estimators = defineFamily<EstimatorEntry>('advantage estimator', [
  { name: 'grpo', build: createGrpo },
  { name: 'tree-grpo', build: createTreeGrpo },
  // treepo whitens over the batch's tokens by definition, so leaving its deviations unscaled would not be treepo.
  {
    name: 'treepo',
    build: createTreepo,
    scaleProblem: (scale) =>
      scale === 'none' ? 'none applies to grpo, tree-grpo, trace and trace-local; treepo whitens over the batch by definition' : undefined,
  },
  { name: 'trace', build: createTrace, perNode: true },
  { name: 'trace-local', build: createTraceLocal, perNode: true },
]);

export function isEstimatorName(name: string): name is EstimatorName {
  return estimators.has(name);
}

/** Whether estimator `name`'s advantages are per node (its entry's `perNode`). */
export function isPerNodeEstimator(name: string): boolean {
  return isEstimatorName(name) && estimators.get(name).perNode === true;
}

/** Every estimator's name, in the family's order. */
export const estimatorNames = (): EstimatorName[] => estimators.names() as EstimatorName[];

/**
 * Why estimator `name` cannot take advantage scale `scale`, or undefined when it can (its entry's
 * answer). The configuration schema and createEstimator both ask this, so the rule is written once.
 */
export function scaleProblem(name: EstimatorName, scale: AdvantageScale | undefined): string | undefined {
  return scale === undefined ? undefined : estimators.get(name).scaleProblem?.(scale);
}

/** Picks an estimator by name once, at configuration time; unknown names fail here, not mid-step. */
export function createEstimator(name: string, options: EstimatorOptions = {}): AdvantageEstimator {
  if (!isEstimatorName(name)) throw new UnknownEstimatorError(name);
  const problem = scaleProblem(name, options.scale);
  if (problem) throw new RangeError(`advantage scale ${problem}`);
  return estimators.get(name).build(options);
}
