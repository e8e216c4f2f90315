import { parseStrategyConfig, type OptionsOf, type StrategyConfig, type StrategyName, type StrategyOptionsInput } from './options.ts';
import type { RootBudget, Strategy } from './types.ts';
import { uniformLeftover } from './parts/leftover.ts';
import { dapoStrategy } from './strategies/dapo.ts';
import { entropyStrategy } from './strategies/entropy.ts';
import { grpoStrategy } from './strategies/grpo.ts';
import { guardedStrategy } from './strategies/guarded.ts';
import { knapsackStrategy } from './strategies/knapsack.ts';
import { oracleStrategy } from './strategies/oracle.ts';
import { pclStrategy } from './strategies/pcl.ts';
import { randomTreeStrategy } from './strategies/random-tree.ts';
import { solverTreeRootBudget, traceStrategy } from './strategies/trace.ts';

/**
 * Per strategy name, once: its constructor, and how its roots spend a budget (the configuration's
 * budget check asks this, see budget-check.ts). The name → implementation choice happens here.
 */
const entries: { [N in StrategyName]: { build: (o: OptionsOf<N>) => Strategy; rootBudget: (o: OptionsOf<N>) => RootBudget } } = {
  trace: { build: traceStrategy, rootBudget: solverTreeRootBudget },
  grpo: { build: grpoStrategy, rootBudget: (o) => (o.groupSize === undefined ? { kind: 'uniform' } : { kind: 'groups', size: o.groupSize }) },
  dapo: { build: dapoStrategy, rootBudget: (o) => ({ kind: 'groups', size: o.groupSize }) },
  pcl: { build: pclStrategy, rootBudget: (o) => ({ kind: 'solver', min: o.min, max: o.max }) },
  knapsack: { build: knapsackStrategy, rootBudget: (o) => ({ kind: 'solver', min: o.min, max: o.max }) },
  'random-tree': { build: randomTreeStrategy, rootBudget: (o) => ({ kind: 'uniform', continuations: o.continuations }) },
  entropy: { build: entropyStrategy, rootBudget: (o) => ({ kind: 'uniform', continuations: o.continuations }) },
  oracle: { build: oracleStrategy, rootBudget: solverTreeRootBudget },
  guarded: { build: guardedStrategy, rootBudget: (o) => (o.groupSize === undefined ? { kind: 'uniform' } : { kind: 'groups', size: o.groupSize }) },
};

/**
 * Builds a strategy; options are validated (zod) and defaults filled. Throws ZodError on bad options,
 * including options the named strategy does not take (e.g. `knapsackPrior` for trace).
 */
export function createStrategy<N extends StrategyName>(name: N, options: StrategyOptionsInput<N>): Strategy {
  return strategyFromConfig({ ...options, name });
}

/** Builds a strategy from a config object `{ name, budget, … }`; unknown names fail while parsing. */
export function strategyFromConfig(config: unknown): Strategy {
  const parsed = parseStrategyConfig(config);
  const strategy = (entries[parsed.name].build as (o: typeof parsed) => Strategy)(parsed);
  if (parsed.unit === 'trajectories') return strategy;
  // In turns and tokens the roots' real cost differs from the planned price, so root-only arms (grpo,
  // pcl, knapsack) need the top-up too to spend B; dapo samples until its cap and keeps no leftover.
  const priced = (s: Strategy): Strategy => {
    const leftover = s.leftover ?? (parsed.name === 'dapo' ? undefined : uniformLeftover('max' in parsed ? parsed.max : 65_535));
    return { ...s, unit: parsed.unit, ...(leftover ? { leftover } : {}) };
  };
  const adapt = strategy.adapt;
  // An adaptive strategy's per-step strategies are priced the same way.
  return { ...priced(strategy), ...(adapt ? { adapt: (state) => { const step = adapt(state); return { ...step, strategy: priced(step.strategy) }; } } : {}) };
}

/** How the roots of a parsed strategy config spend its budget (its registry entry's answer). */
export function rootBudgetOf(config: StrategyConfig): RootBudget {
  return (entries[config.name].rootBudget as (o: StrategyConfig) => RootBudget)(config);
}
