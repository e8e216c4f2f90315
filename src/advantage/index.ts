/**
 * Tree-aware advantage estimators (TRACE-SPEC §5): `grpo`, `tree-grpo`, `treepo`, `trace` and `trace-local`, chosen
 * by name through {@link createEstimator}. Each reads one internal {@link Forest} that a batch of
 * RolloutTrees ({@link forestFromTrees}) or a flat node list ({@link buildForest}) converts into, and
 * returns one {@link LeafAdvantage} per rewarded leaf with per-turn values along the leaf's path.
 * Leaves without reward (failed trajectories) get no advantage and belong to no group.
 * Formulas and conventions: docs/advantages.md. Pure computation; no I/O.
 */
export * from './types.ts';
export { buildForest, ForestError, pathIndices, type ForestIssue } from './forest.ts';
export { forestFromTrees, importanceWeighted, leafPrompts, turnTokens } from './from-tree.ts';
export { subtreeStats, sampleStd, grpoMoments, zScore, ADVANTAGE_SCALES, type AdvantageScale, type GroupStats } from './group-stats.ts';
export { tokenWhiten } from './whiten.ts';
export { createGrpo, type GrpoOptions } from './grpo.ts';
export { createTreeGrpo, type TreeGrpoOptions } from './tree-grpo.ts';
export { createTreepo, treepoRaw, type TreepoOptions } from './treepo.ts';
export {
  createTrace,
  createTraceLocal,
  traceTurnAdvantages,
  DEFAULT_PROMPT_TERM,
  TRACE_PROMPT_TERMS,
  type TraceOptions,
  type TracePromptTerm,
} from './trace.ts';
export {
  createEstimator,
  estimatorNames,
  estimators,
  isEstimatorName,
  isPerNodeEstimator,
  scaleProblem,
  UnknownEstimatorError,
  type EstimatorEntry,
  type EstimatorOptions,
} from './registry.ts';
export { parseForestInput } from './forest-input.ts';
