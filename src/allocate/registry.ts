import { strategyConfigSchema, strategyOptionsSchema, type StrategyName, type StrategyOptionsInput } from './options.ts';
import type { Strategy } from './types.ts';
import type { StrategyOptions } from './options.ts';
import { dapoStrategy } from './strategies/dapo.ts';
import { entropyStrategy } from './strategies/entropy.ts';
import { grpoStrategy } from './strategies/grpo.ts';
import { knapsackStrategy } from './strategies/knapsack.ts';
import { oracleStrategy } from './strategies/oracle.ts';
import { pclStrategy } from './strategies/pcl.ts';
import { randomTreeStrategy } from './strategies/random-tree.ts';
import { traceStrategy } from './strategies/trace.ts';

/** One constructor per strategy name; the name → implementation choice happens here, once. */
const factories: Record<StrategyName, (o: StrategyOptions) => Strategy> = {
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
 * including options the named strategy does not take (`roots` / `prefixes` outside trace and oracle).
 */
export function createStrategy(name: StrategyName, options: StrategyOptionsInput): Strategy {
  return strategyFromConfig({ ...options, name });
}

/** Builds a strategy from a config object `{ name, budget, … }`; unknown names fail while parsing. */
export function strategyFromConfig(config: unknown): Strategy {
  const { name, ...options } = strategyConfigSchema.parse(config);
  return factories[name](strategyOptionsSchema.parse(options));
}
