/**
 * The solvers of allocation (TRACE-SPEC §3 steps 2 and 4): the exact root solver and Knapsack-RL's
 * weighted variant (one weighted solver: a value table, a prefix sweep, a bounded DP when the sweep
 * cannot prove optimality), the greedy-exact prefix solver and its priced form, the value functions
 * they share (V_root, ρ and flip chances), and the feasibility of a budget within [m_min, m_max].
 * Pure numeric code: it knows no strategy, planner or engine; parts/ and strategies/ build on it.
 */
export * from './mixed-value.ts';
export * from './feasibility.ts';
export { solveWeighted, type WeightedItem, type Allocation, type SolveOptions } from './weighted-solver.ts';
export { DP_CELL_LIMIT } from './bounded-dp.ts';
export { solveRoots, type RootProblem } from './root-solver.ts';
export { solveKnapsack, type KnapsackProblem } from './knapsack-solver.ts';
export { solvePrefixes, repeatChance, flipChance, flipGain, type PrefixInput, type PrefixAllocation } from './prefix-solver.ts';
// The heap the leftover planners and trace's pool leftover share with the prefix sweep.
export { MinHeap } from './min-heap.ts';
