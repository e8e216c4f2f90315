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
  prefixes: z.enum(['adaptive', 'uniform', 'entropy-weighted']).optional().describe('trace and oracle only (the paper’s ablation): adaptive (default) = the prefix solver on ρ; uniform = a prompt’s m · N continuations spread evenly over its intermediate prefixes, the remainder one each, shallowest first; entropy-weighted (beyond the paper, after AT²PO) = the prefix solver with prefix j’s value weighted by 1 + entropyWeight · H_j, H_j the policy entropy at the turn after the prefix'),
  entropyWeight: z.number().min(0).optional().describe('trace, prefixes: entropy-weighted only: β of the weight 1 + β·H (H in nats); default 1'),
  rootValue: z.enum(['mixed', 'expansion-aware']).optional().describe('trace only: mixed (default, the paper) = V_root(v, m); expansion-aware = V_root(v, m) + m · d · (1 − (v² + (1 − v)²)^N), the mixed anchors its continuations can add, d = the chance a rollout of the prompt has an intermediate prefix (from earlier steps)'),
  rootPrior: z.enum(['shared', 'posterior']).optional().describe('trace only: shared (default, the paper) = v = Ṽ(prompt) from the shared predictor; posterior = (κ·Ṽ + successes) / (κ + trials), Ṽ as the prior of a per-prompt Beta updated with the prompt’s observed bare outcomes'),
  priorStrength: z.number().positive().optional().describe('trace, rootPrior: posterior only: κ, the prior’s weight in pseudo-outcomes; default 4'),
  leftover: z.enum(['top-up', 'pool']).optional().describe('trace only: top-up (default) = unplaceable budget becomes extra bare rollouts of already selected prompts; pool = solved as a root problem over the whole pool (new prompts get ≥ m_min)'),
});

const maxAtLeastMin = (o: { min: number; max: number }) => o.max >= o.min;
const maxError = { message: 'max must be ≥ min', path: ['max'] };

/** Strategies whose roots and prefixes can each be made uniform (the ablation grid of TRACE-SPEC §7). */
export const ABLATABLE_STRATEGIES: readonly StrategyName[] = ['trace', 'oracle'];
const ablationOnlyWhereMeaningful = (o: { name: StrategyName; roots?: string; prefixes?: string }) =>
  ABLATABLE_STRATEGIES.includes(o.name) || (o.roots === undefined && o.prefixes === undefined);
const ablationError = { message: `roots / prefixes apply to ${ABLATABLE_STRATEGIES.join(' and ')} only (the other strategies fix them); remove them or pick one of those`, path: ['roots'] };

/** Options beyond the paper that only trace takes (each one an ablation arm; docs/allocation.md). */
export const TRACE_ONLY_OPTIONS = ['rootValue', 'rootPrior', 'priorStrength', 'leftover', 'entropyWeight'] as const;
const traceOnlyWhereMeaningful = (o: Record<string, unknown> & { name: StrategyName }) =>
  o.name === 'trace' || (TRACE_ONLY_OPTIONS.every((k) => o[k] === undefined) && o.prefixes !== 'entropy-weighted');
const traceOnlyError = { message: `${TRACE_ONLY_OPTIONS.join(', ')} and prefixes: entropy-weighted apply to trace only; remove them or use name: trace`, path: ['name'] };
const dependentOptions = (o: { rootPrior?: string; priorStrength?: number; prefixes?: string; entropyWeight?: number }) =>
  (o.priorStrength === undefined || o.rootPrior === 'posterior') && (o.entropyWeight === undefined || o.prefixes === 'entropy-weighted');
const dependentError = { message: 'priorStrength needs rootPrior: posterior, and entropyWeight needs prefixes: entropy-weighted', path: ['priorStrength'] };

/** Strict: a misspelt option (e.g. `continuation`) is an error, not silently ignored. */
export const strategyOptionsSchema = strategyOptionsFields.strict().refine(maxAtLeastMin, maxError).refine(dependentOptions, dependentError);

export type StrategyOptions = z.output<typeof strategyOptionsSchema>;
export type StrategyOptionsInput = z.input<typeof strategyOptionsSchema>;

/** A strategy as a config names it: `{ name: 'trace', budget: 512, … }`; unknown names fail here. */
export const strategyConfigSchema = strategyOptionsFields
  .extend({ name: z.enum(STRATEGY_NAMES).describe(`allocation strategy: ${STRATEGY_NAMES.join(', ')}`) })
  .strict()
  .refine(maxAtLeastMin, maxError)
  .refine(ablationOnlyWhereMeaningful, ablationError)
  .refine(traceOnlyWhereMeaningful, traceOnlyError)
  .refine(dependentOptions, dependentError);
export type StrategyConfig = z.output<typeof strategyConfigSchema>;
