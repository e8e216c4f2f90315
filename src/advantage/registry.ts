import type { AdvantageScale } from './group-stats.ts';
import { createGrpo } from './grpo.ts';
import { createTrace, createTraceLocal } from './trace.ts';
import { createTreeGrpo } from './tree-grpo.ts';
import { createTreepo } from './treepo.ts';
import { ESTIMATOR_NAMES, type AdvantageEstimator, type EstimatorName } from './types.ts';

/** Raised when a configuration names an estimator that does not exist. */
export class UnknownEstimatorError extends Error {
  override name = 'UnknownEstimatorError';
  constructor(readonly requested: string) {
    super(`unknown advantage estimator "${requested}"; choose one of: ${ESTIMATOR_NAMES.join(', ')}`);
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

const FACTORIES: Record<EstimatorName, (options: EstimatorOptions) => AdvantageEstimator> = {
  grpo: createGrpo,
  'tree-grpo': createTreeGrpo,
  treepo: createTreepo,
  trace: createTrace,
  'trace-local': createTraceLocal,
};

export function isEstimatorName(name: string): name is EstimatorName {
  return (ESTIMATOR_NAMES as readonly string[]).includes(name);
}

/**
 * Why estimator `name` cannot take advantage scale `scale`, or undefined when it can: treepo whitens
 * over the batch's tokens by definition, so leaving its deviations unscaled would not be treepo. The
 * configuration schema and createEstimator both ask this, so the rule is written once.
 */
export function scaleProblem(name: EstimatorName, scale: AdvantageScale | undefined): string | undefined {
  if (name === 'treepo' && scale === 'none') return 'none applies to grpo, tree-grpo, trace and trace-local; treepo whitens over the batch by definition';
  return undefined;
}

/** Picks an estimator by name once, at configuration time; unknown names fail here, not mid-step. */
export function createEstimator(name: string, options: EstimatorOptions = {}): AdvantageEstimator {
  if (!isEstimatorName(name)) throw new UnknownEstimatorError(name);
  const problem = scaleProblem(name, options.scale);
  if (problem) throw new RangeError(`advantage scale ${problem}`);
  return FACTORIES[name](options);
}
