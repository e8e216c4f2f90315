/**
 * Allocation: where a step's rollout budget goes (TRACE-SPEC §3 steps 2 and 4, §6). `solvers/`: the
 * exact root solver (and Knapsack-RL's weighted variant) and the prefix solver; `parts/`: root, prefix
 * and leftover planners built on them; `strategies/`: every strategy as a composition of parts behind
 * the `Strategy` interface, built by name with `createStrategy` (`registry.ts`, options in
 * `options.ts`). Pure: no I/O, randomness passed in.
 */
export * from './types.ts';
export * from './errors.ts';
// The solvers' public part (their heap stays internal).
export {
  mixedChance,
  mixedGain,
  knapsackWeight,
  selectableCounts,
  isSpendable,
  spendableBelow,
  spendableAbove,
  type Bounds,
  solveWeighted,
  type WeightedItem,
  type Allocation,
  type SolveOptions,
  DP_CELL_LIMIT,
  solveRoots,
  type RootProblem,
  solveKnapsack,
  type KnapsackProblem,
  solvePrefixes,
  repeatChance,
  flipChance,
  flipGain,
  type PrefixInput,
  type PrefixAllocation,
} from './solvers/index.ts';
export {
  RECOMMENDED_TRACE_OPTIONS,
  TRACE_PRESETS,
  type TracePreset,
  strategyOptionSchemas,
  pluginStrategyOptions,
  foreignOptionMessage,
  optionKeys,
  optionsFor,
  type StrategyName,
  type OptionsOf,
  type StrategyOptionsInput,
  type StrategyConfig,
  type StrategyConfigInput,
} from './options.ts';
export {
  createStrategy,
  optionsTakenBy,
  parseStrategyConfig,
  strategies,
  strategyConfigSchema,
  strategyFromConfig,
  strategyOptionKeys,
  withPreset,
  type StrategyEntry,
} from './registry.ts';
export { isMixedGroup } from './strategies/dapo.ts';
export { historyRate } from './strategies/knapsack.ts';
export { runAllocationDemo, summarise, DEMO_DEFAULTS, DEMO_STRATEGIES, type DemoOptions, type DemoRow, type Summary } from './demo/demo.ts';
export { beta, gamma, normal, binomial, noisyPrediction } from './demo/sampling.ts';
export { adaptiveTopUp, uniformTopUp, adaptiveLeftover, uniformLeftover } from './parts/leftover.ts';
export { allRemaining, treeShare, uniformRootPlanner, uniformRoots, solvedRootPlanner, type RootShare, type RootValue } from './parts/roots.ts';
export { solvedPrefixPlanner, evenPrefixPlanner, randomPrefixPlanner, entropyPrefixPlanner, evenPrefixes } from './parts/prefixes.ts';
export { budgetProblem } from './budget-check.ts';
export {
  binomialUpperTail,
  guardMetrics,
  initialGuard,
  nextGuard,
  spentAlpha,
  storedGuard,
  yieldTest,
  type GuardOptions,
  type GuardState,
  type PartYield,
} from './guard.ts';
export { expandableChance, readingEvidence, withHistory } from './parts/evidence.ts';
