import { z } from 'zod';
import { defineFamily, discriminatedSchema } from '../util/family.ts';
import {
  strategyOptionSchemas,
  TRACE_PRESETS,
  type OptionsOf,
  type StrategyConfig,
  type StrategyName,
  type StrategyOptionsInput,
  type TracePreset,
} from './options.ts';
import type { RootBudget, Strategy } from './types.ts';
import { uniformLeftover } from './parts/leftover.ts';
import { dapoStrategy } from './strategies/dapo.ts';
import { defensiveStrategy } from './strategies/defensive.ts';
import { entropyStrategy } from './strategies/entropy.ts';
import { grpoStrategy } from './strategies/grpo.ts';
import { guardedStrategy } from './strategies/guarded.ts';
import { knapsackStrategy } from './strategies/knapsack.ts';
import { oracleStrategy } from './strategies/oracle.ts';
import { pclStrategy } from './strategies/pcl.ts';
import { randomTreeStrategy } from './strategies/random-tree.ts';
import { solverTreeRootBudget, traceStrategy } from './strategies/trace.ts';

/**
 * One allocation strategy: its options' schema, its constructor, how its roots spend a budget (the
 * configuration's budget check asks this, see budget-check.ts), what it fills into a config before the
 * schema reads it (trace's presets) and, for a strategy that samples rounds until it has enough mixed
 * groups, that it does (`dynamicSampling`). A plugin (lab/) registers entries of the same shape.
 */
export interface StrategyEntry {
  name: string;
  /** Its options, strict, with `name` a literal and `unit` and `budget` among them. */
  schema: z.ZodType;
  build(options: never): Strategy;
  rootBudget(options: never): RootBudget;
  /** Fills named defaults into a raw config of this strategy before the schema parses it. */
  preprocess?(config: Record<string, unknown>): Record<string, unknown>;
  /**
   * Samples groups round after round until ⌊B / G⌋ of them are mixed or its cap is spent: it has no
   * leftover to top up, and its target is counted in whole trajectories (beside a budget in turns or
   * tokens it runs at a budget in trajectories).
   */
  dynamicSampling?: true;
}

/** A built-in entry, typed by its own options. */
const entry = <N extends StrategyName>(
  name: N,
  rest: {
    build(o: OptionsOf<N>): Strategy;
    rootBudget(o: OptionsOf<N>): RootBudget;
    preprocess?: StrategyEntry['preprocess'];
    dynamicSampling?: true;
  },
): StrategyEntry => ({ name, schema: strategyOptionSchemas[name], ...rest }) as unknown as StrategyEntry;
const groupsOrUniform = (o: { groupSize?: number }): RootBudget => (o.groupSize === undefined ? { kind: 'uniform' } : { kind: 'groups', size: o.groupSize });

/** trace's named presets: the preset's fields where the config leaves them out (explicit fields win). */
const tracePreset = (c: Record<string, unknown>) =>
  typeof c.preset === 'string' && c.preset in TRACE_PRESETS ? { ...TRACE_PRESETS[c.preset as TracePreset], ...c } : c;

/** The strategy family: the name → implementation choice happens here, once, at configuration time. */
export const strategies = defineFamily<StrategyEntry>('strategy', [
  entry('trace', { build: traceStrategy, rootBudget: solverTreeRootBudget, preprocess: tracePreset }),
  entry('grpo', { build: grpoStrategy, rootBudget: groupsOrUniform }),
  entry('dapo', { build: dapoStrategy, rootBudget: (o) => ({ kind: 'groups', size: o.groupSize }), dynamicSampling: true }),
  entry('pcl', { build: pclStrategy, rootBudget: (o) => ({ kind: 'solver', min: o.min, max: o.max }) }),
  entry('knapsack', { build: knapsackStrategy, rootBudget: (o) => ({ kind: 'solver', min: o.min, max: o.max }) }),
  entry('random-tree', { build: randomTreeStrategy, rootBudget: (o) => ({ kind: 'uniform', continuations: o.continuations }) }),
  entry('entropy', { build: entropyStrategy, rootBudget: (o) => ({ kind: 'uniform', continuations: o.continuations }) }),
  entry('oracle', { build: oracleStrategy, rootBudget: solverTreeRootBudget }),
  entry('guarded', { build: guardedStrategy, rootBudget: groupsOrUniform }),
  entry('defensive', { build: defensiveStrategy, rootBudget: groupsOrUniform }),
]);

/**
 * The option names a registered strategy takes (besides `name`), read from its entry's schema: a
 * plugin's strategy too, which the built-ins' typed `optionKeys` does not know.
 */
export function strategyOptionKeys(name: string): string[] {
  const shape = (strategies.get(name).schema as { shape?: Record<string, unknown> }).shape;
  return Object.keys(shape ?? {}).filter((k) => k !== 'name');
}

/** The entries of `options` that registered strategy `name` takes: one set of options for several strategies (compare, benches). */
export function optionsTakenBy(name: string, options: Record<string, unknown>): Record<string, unknown> {
  const keys = strategyOptionKeys(name);
  return Object.fromEntries(Object.entries(options).filter(([k]) => keys.includes(k)));
}

/**
 * A strategy config with its entry's named defaults filled in (trace's preset), before the schema; any
 * other value unchanged. The stored config then holds every field.
 */
export function withPreset(config: unknown): unknown {
  if (typeof config !== 'object' || config === null) return config;
  const name = (config as { name?: unknown }).name;
  const fill = typeof name === 'string' && strategies.has(name) ? strategies.get(name).preprocess : undefined;
  return fill ? fill(config as Record<string, unknown>) : config;
}

/**
 * Every strategy config, discriminated by `name` over the family (a plugin's too, once registered):
 * unknown names fail on `name`, options the chosen strategy does not take fail as unrecognised keys.
 */
export const strategyConfigSchema = z.preprocess(withPreset, discriminatedSchema(strategies, 'name')) as unknown as z.ZodType<StrategyConfig>;

/** Parses a strategy config (defaults filled); throws ZodError naming each bad field. */
export function parseStrategyConfig(config: unknown): StrategyConfig {
  return strategyConfigSchema.parse(config);
}

/**
 * The top-up's cap per prompt for strategies without m_max of their own: in effect none (the same
 * bound as the largest m_max the solvers accept, weighted-solver.ts).
 */
const NO_ROOT_CAP = 65_535;

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
  const own = strategies.get(parsed.name);
  const strategy = own.build(parsed as never);
  if (parsed.unit === 'trajectories') return strategy;
  // In turns and tokens the roots' real cost differs from the planned price, so root-only arms (grpo,
  // pcl, knapsack) need the top-up too to spend B; a dynamic sampler spends until its cap instead.
  const priced = (s: Strategy): Strategy => {
    const leftover = s.leftover ?? (own.dynamicSampling ? undefined : uniformLeftover('max' in parsed ? parsed.max : NO_ROOT_CAP));
    return { ...s, unit: parsed.unit, ...(leftover ? { leftover } : {}) };
  };
  const perStep = strategy.perStep;
  // A strategy's per-step strategies are priced the same way.
  return {
    ...priced(strategy),
    ...(perStep
      ? {
          perStep: async (start) => {
            const plan = await perStep(start);
            return { ...plan, strategy: priced(plan.strategy) };
          },
        }
      : {}),
  };
}

/** How the roots of a parsed strategy config spend its budget (its registry entry's answer). */
export function rootBudgetOf(config: StrategyConfig): RootBudget {
  return strategies.get(config.name).rootBudget(config as never);
}
