import { z } from 'zod';

/** Every allocation strategy, by the name a config uses (TRACE-SPEC §6). */
export const STRATEGY_NAMES = ['trace', 'grpo', 'dapo', 'pcl', 'knapsack', 'random-tree', 'entropy', 'oracle'] as const;
export type StrategyName = (typeof STRATEGY_NAMES)[number];

/**
 * Options shared by the strategies; each field's description is its single documentation. Budget
 * accounting (docs/allocation.md): B trajectories per step. Tree strategies (trace, oracle, random-tree,
 * entropy) spend M = ⌊B / (1 + N)⌋ roots and give prompt i m_i · N continuations; root-only strategies
 * (grpo, pcl, knapsack) spend all B on bare rollouts; dapo samples until its cap.
 */
const strategyOptionsFields = z.object({
  budget: z.number().int().positive().describe('B: trajectories per step (bare rollouts + continuations), the equal-cost unit'),
  continuations: z.number().int().min(0).default(2).describe('N: continuations per bare rollout; tree strategies give prompt i a continuation budget of m_i · N'),
  min: z.number().int().min(2).default(2).describe('m_min ≥ 2: fewest bare rollouts a selected prompt gets (one outcome is never mixed)'),
  max: z.number().int().min(2).default(16).describe('m_max: most bare rollouts one prompt gets'),
  batchSize: z.number().int().positive().optional().describe('prompts per batch for uniform strategies (grpo, random-tree, entropy; the first ones of the pool) and the number of mixed groups dapo collects; default: the whole pool for uniform strategies, ⌊B / groupSize⌋ for dapo'),
  groupSize: z.number().int().min(2).default(8).describe('G: rollouts per prompt in each dapo round'),
  dapoMaxTrajectories: z.number().int().positive().optional().describe('hard cap on trajectories dapo may spend in one step (it reports its real cost); default 4 · B'),
  dapoRoundPrompts: z.number().int().positive().optional().describe('prompts dapo samples per round; default: its target number of mixed groups'),
  knapsackPrior: z.number().min(0).default(1).describe('α of the smoothed success rate p̂ = (successes + α) / (trials + 2α) knapsack uses (α = 1: an unseen prompt has p̂ = 0.5)'),
  roots: z.enum(['adaptive', 'uniform']).optional().describe('trace and oracle only (the paper’s ablation): adaptive (default) = the exact root solver on v; uniform = groups of max(2, ⌊M / batch⌋) over the batch, as random-tree, ignoring v, m_min and m_max'),
  prefixes: z.enum(['adaptive', 'uniform']).optional().describe('trace and oracle only (the paper’s ablation): adaptive (default) = the prefix solver on ρ; uniform = a prompt’s m · N continuations spread evenly over its intermediate prefixes, the remainder one each, shallowest first'),
});

const maxAtLeastMin = (o: { min: number; max: number }) => o.max >= o.min;
const maxError = { message: 'max must be ≥ min', path: ['max'] };

/** Strategies whose roots and prefixes can each be made uniform (the ablation grid of TRACE-SPEC §7). */
export const ABLATABLE_STRATEGIES: readonly StrategyName[] = ['trace', 'oracle'];
const ablationOnlyWhereMeaningful = (o: { name: StrategyName; roots?: string; prefixes?: string }) =>
  ABLATABLE_STRATEGIES.includes(o.name) || (o.roots === undefined && o.prefixes === undefined);
const ablationError = { message: `roots / prefixes apply to ${ABLATABLE_STRATEGIES.join(' and ')} only (the other strategies fix them); remove them or pick one of those`, path: ['roots'] };

/** Strict: a misspelt option (e.g. `continuation`) is an error, not silently ignored. */
export const strategyOptionsSchema = strategyOptionsFields.strict().refine(maxAtLeastMin, maxError);

export type StrategyOptions = z.output<typeof strategyOptionsSchema>;
export type StrategyOptionsInput = z.input<typeof strategyOptionsSchema>;

/** A strategy as a config names it: `{ name: 'trace', budget: 512, … }`; unknown names fail here. */
export const strategyConfigSchema = strategyOptionsFields
  .extend({ name: z.enum(STRATEGY_NAMES).describe(`allocation strategy: ${STRATEGY_NAMES.join(', ')}`) })
  .strict()
  .refine(maxAtLeastMin, maxError)
  .refine(ablationOnlyWhereMeaningful, ablationError);
export type StrategyConfig = z.output<typeof strategyConfigSchema>;
