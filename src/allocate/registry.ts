import { parseStrategyConfig, type OptionsOf, type StrategyName, type StrategyOptionsInput } from './options.ts';
import type { Strategy } from './types.ts';
import { uniformLeftover } from './parts/leftover.ts';
import { dapoStrategy } from './strategies/dapo.ts';
import { entropyStrategy } from './strategies/entropy.ts';
import { grpoStrategy } from './strategies/grpo.ts';
import { knapsackStrategy } from './strategies/knapsack.ts';
import { oracleStrategy } from './strategies/oracle.ts';
import { pclStrategy } from './strategies/pcl.ts';
import { randomTreeStrategy } from './strategies/random-tree.ts';
import { traceStrategy } from './strategies/trace.ts';

/** One constructor per strategy name; the name → implementation choice happens here, once. */
const factories: { [N in StrategyName]: (o: OptionsOf<N>) => Strategy } = {
  trace: traceStrategy,
  grpo: grpoStrategy,
  dapo: dapoStrategy,
  pcl: pclStrategy,
  knapsack: knapsackStrategy,
  'random-tree': randomTreeStrategy,
  entropy: entropyStrategy,
  oracle: oracleStrategy,
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
  const strategy = (factories[parsed.name] as (o: typeof parsed) => Strategy)(parsed);
  if (parsed.unit === 'trajectories') return strategy;
  // In turns and tokens the roots' real cost differs from the planned price, so root-only arms (grpo,
  // pcl, knapsack) need the top-up too to spend B; dapo samples until its cap and keeps no leftover.
  const leftover = strategy.leftover ?? (parsed.name === 'dapo' ? undefined : uniformLeftover('max' in parsed ? parsed.max : 65_535));
  return { ...strategy, unit: parsed.unit, ...(leftover ? { leftover } : {}) };
}
