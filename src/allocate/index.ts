/**
 * Allocation: where a step's rollout budget goes (TRACE-SPEC §3 steps 2 and 4, §6). The exact root
 * solver (and Knapsack-RL's weighted variant), the prefix solver, and every strategy behind the
 * `Strategy` interface, built by name with `createStrategy`. Pure: no I/O, randomness passed in.
 */
export * from './types.ts';
export * from './errors.ts';
export * from './mixed-value.ts';
export * from './feasibility.ts';
export { solveWeighted, type WeightedItem, type Allocation, type SolveOptions } from './weighted-solver.ts';
export { DP_CELL_LIMIT } from './bounded-dp.ts';
export { solveRoots, type RootProblem } from './root-solver.ts';
export { solveKnapsack, type KnapsackProblem } from './knapsack-solver.ts';
export { solvePrefixes, repeatChance, flipChance, flipGain, type PrefixInput, type PrefixAllocation } from './prefix-solver.ts';
export { STRATEGY_NAMES, RECOMMENDED_TRACE_OPTIONS, strategyOptionSchemas, strategyConfigSchema, parseStrategyConfig, foreignOptionMessage, optionKeys, optionsFor, type StrategyName, type OptionsOf, type StrategyOptionsInput, type StrategyConfig, type StrategyConfigInput } from './options.ts';
export { createStrategy, strategyFromConfig } from './registry.ts';
export { isMixedGroup } from './strategies/dapo.ts';
export { historyRate } from './strategies/knapsack.ts';
export { runAllocationDemo, summarise, DEMO_DEFAULTS, DEMO_STRATEGIES, type DemoOptions, type DemoRow, type Summary } from './demo.ts';
export { beta, gamma, normal, binomial, noisyPrediction } from './sampling.ts';
export { adaptiveTopUp, uniformTopUp, adaptiveLeftover, uniformLeftover } from './leftover.ts';
export { allRemaining, treeShare, uniformRootPlanner, uniformRoots, solvedRootPlanner, type RootShare, type RootValue } from './parts/roots.ts';
export { solvedPrefixPlanner, evenPrefixPlanner, randomPrefixPlanner, entropyPrefixPlanner, evenPrefixes } from './parts/prefixes.ts';
export { budgetProblem } from './budget-check.ts';
