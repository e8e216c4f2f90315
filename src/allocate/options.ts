import { z } from 'zod';
import { BUDGET_UNITS } from '../budget/units.ts';

/**
 * The option fields, each described once; every strategy's schema below picks the ones it takes. Budget
 * accounting (docs/allocation.md): B trajectories per step. Tree strategies (trace, oracle, random-tree,
 * entropy) spend M = ⌊B / (1 + N)⌋ roots and give prompt i m_i · N continuations; root-only strategies
 * (grpo, pcl, knapsack) spend all B on bare rollouts; dapo samples until its cap.
 */
const budget = z.number().int().positive().describe('B: the budget per step, in `unit` (trajectories: bare rollouts + continuations)');
const unit = z
  .enum(BUDGET_UNITS)
  .default('trajectories')
  .describe(
    'the unit of B: trajectories (bare rollouts + continuations, each 1), turns (policy calls = tool calls) or tokens (generated); in turns and tokens a continuation costs only the suffix it generates, roots and the leftover are planned at the expected cost of a bare rollout from earlier steps, and the step ends when B is spent (docs/allocation.md §2)',
  );
const continuations = z
  .number()
  .min(0)
  .default(2)
  .describe(
    'N: continuations per bare rollout; tree strategies spend M = ⌊B / (1 + N)⌋ bare rollouts and give prompt i a continuation budget of ⌊m_i · N⌋ (N may be a fraction: ½ = one continuation per two bare rollouts, which leaves more of B to the bare rollouts, i.e. more prompts)',
  );
const min = z.number().int().min(2).default(2).describe('m_min ≥ 2: fewest bare rollouts a selected prompt gets (one outcome is never mixed)');
const max = z.number().int().min(2).default(16).describe('m_max: most bare rollouts one prompt gets (tree strategies: also the cap of the leftover top-up)');
const batchSize = z.number().int().positive().optional().describe('uniform roots: prompts per batch (the first ones of the pool); default the whole pool');
const ablation = (phase: string, adaptive: string, uniform: string) =>
  z.enum(['adaptive', 'uniform']).optional().describe(`the paper’s ablation of the ${phase}: adaptive (default) = ${adaptive}; uniform = ${uniform}`);
const roots = ablation(
  'roots',
  'the exact root solver on v',
  'groups of max(2, ⌊M / batch⌋) over the batch, as random-tree, ignoring v, m_min and m_max (leftover budget also uniform)',
);
const prefixes = ablation(
  'prefixes',
  'the prefix solver on ρ',
  'a prompt’s m · N continuations spread evenly over its intermediate prefixes, the remainder one each, shallowest first',
);

const maxAtLeastMin = (o: { min: number; max: number }) => o.max >= o.min;
const maxError = { message: 'max must be ≥ min', path: ['max'] };

/**
 * The trace options `trace-rl compare --trace recommended` (its default) runs; `{}` is the paper's
 * method. Uniform roots, root re-sampling at N = ½, the paper's prefix solver, and no branch point
 * before turn 2: chosen by a rule fixed before the results were seen, because at equal
 * tokens it does not lose to grpo on the default world; it ties grpo on the late-decision world and
 * loses on math-world, so it is a safe default, not a claimed win.
 */
export const RECOMMENDED_TRACE_OPTIONS = { roots: 'uniform', rootResample: true, continuations: 0.5, branchFrom: 2 } as const;

/** trace's named presets: the fields each one sets, under whatever the config gives explicitly. */
export const TRACE_PRESETS = { paper: {}, recommended: RECOMMENDED_TRACE_OPTIONS } as const;
export type TracePreset = keyof typeof TRACE_PRESETS;

/**
 * A plugin strategy's options (lab/, a user's module): strict, with the budget B and its unit described
 * as every built-in strategy's are, so the configuration reference and the train flags (`--budget`,
 * `--budget-unit`) treat it as one of them; `shape` adds its own fields.
 */
export function pluginStrategyOptions<N extends string, S extends z.ZodRawShape>(name: N, shape: S) {
  return strategyObject(name, { budget, ...shape });
}

/** A strategy's own options, strict: a key it does not take fails with foreignOptionMessage. */
function strategyObject<N extends string, S extends z.ZodRawShape>(name: N, shape: S) {
  return z.strictObject(
    { name: z.literal(name), unit, ...shape },
    {
      error: (issue) => (issue.code === 'unrecognized_keys' ? issue.keys.map((k) => foreignOptionMessage(name, k)).join('; ') : undefined),
    },
  );
}

/** The solver tree strategies (trace, oracle): each phase adaptive or uniform (the ablation grid, TRACE-SPEC §7). */
const solverTreeFields = { budget, continuations, min, max, batchSize, roots, prefixes };

/**
 * trace's options beyond the paper (each one an ablation arm, docs/allocation.md §4 "Beyond the
 * paper"). Absent = the paper's method.
 */
const traceFields = {
  ...solverTreeFields,
  preset: z
    .enum(['paper', 'recommended'])
    .optional()
    .describe(
      'a named set of the options below, filled in where the config leaves them out (explicit options win): paper = the published method (no option beyond it); recommended = what the pre-registered comparisons support (uniform roots, root re-sampling, N = ½, branchFrom 2). Absent = paper for the library; a train configuration that names trace without a preset gets recommended',
    ),
  prefixes: z
    .enum(['adaptive', 'uniform', 'entropy-weighted', 'decision-weighted'])
    .optional()
    .describe(
      'the paper’s ablation of the prefixes: adaptive (default) = the prefix solver on ρ; uniform = a prompt’s m · N continuations spread evenly over its intermediate prefixes, the remainder one each, shallowest first; entropy-weighted (trace only, beyond the paper, after AT²PO) = the prefix solver with prefix j’s value weighted by 1 + entropyWeight · H_j, H_j the policy entropy at the turn after the prefix; decision-weighted (trace only, beyond the paper) = weighted by the turns the rollout took after the prefix (T_j − t), the decisions a flip there gives credit to',
    ),
  entropyWeight: z.number().min(0).optional().describe('prefixes: entropy-weighted only: β of the weight 1 + β·H (H in nats); default 1'),
  rootValue: z
    .enum(['mixed', 'expansion-aware'])
    .optional()
    .describe(
      'mixed (default, the paper) = V_root(v, m); expansion-aware = V_root(v, m) + m · d · (1 − (v² + (1 − v)²)^N), the mixed anchors its continuations can add, d = the chance a rollout of the prompt has an intermediate prefix (from earlier steps)',
    ),
  rootPrior: z
    .enum(['shared', 'posterior'])
    .optional()
    .describe(
      'shared (default, the paper) = v = Ṽ(prompt) from the shared predictor; posterior = (κ·Ṽ + successes) / (κ + trials), Ṽ as the prior of a per-prompt Beta updated with the prompt’s observed bare outcomes',
    ),
  priorStrength: z.number().positive().optional().describe('rootPrior: posterior only: κ, the prior’s weight in pseudo-outcomes; default 4'),
  expansionRounds: z
    .number()
    .int()
    .min(1)
    .max(8)
    .optional()
    .describe(
      '1 (default, the paper) = one expansion round over the prefixes of the bare rollouts; R > 1 = a prompt’s m · N continuations spread over R rounds, round r > 0 expanding the prefixes of round r − 1’s continuations as soon as they finish (TRACE-SPEC §3 step 4’s open point)',
    ),
  rootResample: z
    .boolean()
    .optional()
    .describe(
      'false (default, the paper) = continuations branch from intermediate prefixes only; true (beyond the paper) = the prompt’s root is also a candidate of the prefix solver while its bare outcomes all agree (q = Ṽ(prompt), r = that outcome, depth 0; decision-weighted: weighted by the mean turns of its bare rollouts), and a “continuation” from it is one more bare rollout, so the solver itself trades bare rollouts against continuations',
    ),
  leftover: z
    .enum(['top-up', 'pool'])
    .optional()
    .describe(
      'top-up (default) = unplaceable budget becomes extra bare rollouts of already selected prompts; pool = solved as a root problem over the whole pool (new prompts get ≥ m_min)',
    ),
  branchFrom: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe(
      't_min: the shallowest intermediate prefix a continuation may branch from, in turns (1, the default and the paper: every intermediate prefix); 2 = never re-run from after the first turn, for tasks whose first turn decides nothing (the late-decision world’s first search of the one entity the question names); rootResample’s root candidate is kept',
    ),
  prefixValue: z
    .enum(['flip', 'outcome-blind'])
    .optional()
    .describe(
      'flip (default, the paper) = a prefix is worth the chance a continuation flips its rollout’s observed reward r, ρ = r·q + (1 − r)(1 − q), so where the tree branches depends on the outcome it saw; outcome-blind = r replaced by the prediction q itself, ρ = q² + (1 − q)², whose first continuation is worth 2·q(1 − q) = 2·V̂(1 − V̂): branch points chosen without looking at the outcomes below them',
    ),
  prefixBudget: z
    .enum(['per-prompt', 'shared'])
    .optional()
    .describe(
      'per-prompt (default, the paper) = prompt i spends its own m_i · N continuations on its own prefixes as soon as its bare rollouts finish; shared (beyond the paper) = once every bare rollout of the step has finished, the prefix solver spends Σ m_i · N over the prefixes of all prompts at once, so continuations go to the prompts whose outcomes they can flip (the step waits for its slowest prompt)',
    ),
};
const dependentOptions = (o: { rootPrior?: string; priorStrength?: number; prefixes?: string; entropyWeight?: number }) =>
  (o.priorStrength === undefined || o.rootPrior === 'posterior') && (o.entropyWeight === undefined || o.prefixes === 'entropy-weighted');
const dependentError = { message: 'priorStrength needs rootPrior: posterior, and entropyWeight needs prefixes: entropy-weighted', path: ['priorStrength'] };
/** Options that steer the root solver; with roots: uniform there is none, and they would be silently ignored. */
const ROOT_SOLVER_OPTIONS = { leftover: 'pool', rootValue: 'expansion-aware', rootPrior: 'posterior' } as const;
const rootSolverOption = (o: { roots?: string; leftover?: string; rootValue?: string; rootPrior?: string }) =>
  o.roots === 'uniform' ? (Object.keys(ROOT_SOLVER_OPTIONS) as (keyof typeof ROOT_SOLVER_OPTIONS)[]).find((k) => o[k] === ROOT_SOLVER_OPTIONS[k]) : undefined;
/** Tree strategies with uniform roots (random-tree, entropy). */
const uniformTreeFields = { budget, continuations, max, batchSize };

export const strategyOptionSchemas = {
  trace: strategyObject('trace', { ...traceFields })
    .refine(maxAtLeastMin, maxError)
    .refine(dependentOptions, dependentError)
    .refine((o) => !(o.rootResample && o.prefixes === 'uniform'), {
      message: 'rootResample: true needs the prefix solver; prefixes: uniform spreads continuations evenly and has none',
      path: ['rootResample'],
    })
    .refine((o) => !(o.prefixValue === 'outcome-blind' && o.prefixes === 'uniform'), {
      message: 'prefixValue: outcome-blind steers the prefix solver; prefixes: uniform spreads continuations evenly and has none',
      path: ['prefixValue'],
    })
    .refine((o) => !(o.prefixBudget === 'shared' && o.prefixes === 'uniform'), {
      message: 'prefixBudget: shared needs the prefix solver; prefixes: uniform spreads continuations evenly and has none',
      path: ['prefixBudget'],
    })
    .refine((o) => !(o.prefixBudget === 'shared' && (o.expansionRounds ?? 1) > 1), {
      message: 'prefixBudget: shared plans one expansion round for the whole step; drop expansionRounds or use prefixBudget: per-prompt',
      path: ['prefixBudget'],
    })
    .superRefine((o, ctx) => {
      const k = rootSolverOption(o);
      if (k)
        ctx.addIssue({
          code: 'custom',
          path: [k],
          message: `${k}: ${ROOT_SOLVER_OPTIONS[k]} steers the root solver, which roots: uniform does not use; drop one of the two`,
        });
    }),
  oracle: strategyObject('oracle', {
    ...solverTreeFields,
    truthSamples: z
      .number()
      .int()
      .min(1)
      .max(100_000)
      .optional()
      .describe(
        'a measuring instrument: the root solver sees each prompt’s true p only through this many fresh outcomes a step, v = (1 + successes) / (2 + k); what a per-prompt predictor with that much evidence could reach at best. Where the environment does not know p (world, math-world), the outcomes are k bare rollouts of each candidate under the current policy, outside the budget and never trained on (k · pool rollouts a step; metric probe_tokens), and continuations must be 0. Default: the exact p',
      ),
  }).refine(maxAtLeastMin, maxError),
  grpo: strategyObject('grpo', {
    budget,
    batchSize,
    groupSize: z
      .number()
      .int()
      .min(2)
      .optional()
      .describe(
        'G: rollouts per prompt (TRL’s num_generations, verl’s rollout.n); grpo then takes ⌊B / G⌋ prompts of the pool, the first ones of its random draw, so a pool larger than B / G is a candidate pool that grpo samples from at random while the allocators choose among all of it. Default: ⌊B / pool⌋ (at least 2), every prompt of the pool',
      ),
  }),
  dapo: strategyObject('dapo', {
    budget,
    batchSize: z.number().int().positive().optional().describe('dapo: mixed groups to collect per step; default ⌊B / groupSize⌋'),
    groupSize: z.number().int().min(2).default(8).describe('G: rollouts per prompt in each dapo round'),
    dapoMaxTrajectories: z
      .number()
      .int()
      .positive()
      .optional()
      .describe('hard cap on trajectories dapo may spend in one step (it reports its real cost); default 4 · B'),
    dapoRoundPrompts: z.number().int().positive().optional().describe('prompts dapo samples per round; default: its target number of mixed groups'),
  })
    // dapo's target is ⌊B / G⌋ mixed groups and its rounds are whole groups: B in turns or tokens would make
    // that target thousands of groups. Its cost in every unit is recorded, so it is compared by that.
    .refine((o) => o.unit === 'trajectories', {
      message:
        'dapo counts its budget in trajectories (its target is ⌊B / groupSize⌋ mixed groups of whole rollouts); drop unit, and compare it by the real cost in turns or tokens every step records',
      path: ['unit'],
    }),
  pcl: strategyObject('pcl', { budget, min, max }).refine(maxAtLeastMin, maxError),
  guarded: strategyObject('guarded', {
    budget,
    min,
    max,
    groupSize: z.number().int().min(2).optional().describe('guarded: G of its grpo part (as grpo’s groupSize); default ⌊B / pool⌋, at least 2'),
    explore: z
      .number()
      .gt(0)
      .max(0.5)
      .default(0.25)
      .describe(
        'guarded: ε, the share of each step the root solver spends over the prompts grpo’s part leaves out, at the start and whenever the test finds its yield lower; grpo’s part keeps 1 − ε, so a step keeps at least (1 − ε) of grpo’s distinct prompts whatever the solver does',
      ),
    maxShare: z
      .number()
      .gt(0)
      .max(1)
      .default(0.75)
      .describe(
        'guarded: the most of a step the solver’s part may grow to, one ε at a time, each rung after a sequential test found its distinct mixed prompts per unit of budget higher than grpo’s part',
      ),
    alpha: z
      .number()
      .gt(0)
      .max(0.5)
      .default(0.05)
      .describe('guarded: the sequential test’s family-wise level between two changes of the share (the n-th look at α · 6/(π² n²))'),
  })
    .refine(maxAtLeastMin, maxError)
    .refine((o) => o.maxShare >= o.explore, { message: 'maxShare must be ≥ explore', path: ['maxShare'] }),
  defensive: strategyObject('defensive', {
    budget,
    groupSize: z.number().int().min(2).optional().describe('defensive: G rollouts a draw (as grpo’s groupSize); default ⌊B / pool⌋, at least 2'),
    explore: z
      .number()
      .min(0)
      .lt(1)
      .default(0.25)
      .describe(
        'defensive: ε, the weight of the predictor in the draw distribution q = (1 − ε)·uniform + ε·(chance a group is mixed, normalised); advantages are weighted by 1/(n·q), so the step stays unbiased for the uniform objective and a useless predictor costs at most a 1/(1 − ε) variance factor (0 with systematic draws = grpo’s uniform prompts without repeats)',
      ),
    draws: z
      .enum(['independent', 'systematic'])
      .default('systematic')
      .describe(
        'defensive: systematic (default) = no repeats, prompt i in with probability K·q_i (capped at 1), Horvitz–Thompson weights (unbiased; no bound claimed); independent = each group draws its prompt from q (repeats possible; the 1/(1 − ε) variance bound holds). On 40 fresh seeds of a pre-registered comparison systematic tied grpo G = 3 (+0.4 points [−1.1, +1.9]) and independent lost (−2.1 [−3.6, −0.5]): repeats cost distinct prompts',
      ),
  }),
  knapsack: strategyObject('knapsack', {
    budget,
    min,
    max,
    knapsackPrior: z
      .number()
      .min(0)
      .default(1)
      .describe('α of the smoothed success rate p̂ = (successes + α) / (trials + 2α) knapsack uses (α = 1: an unseen prompt has p̂ = 0.5)'),
  }).refine(maxAtLeastMin, maxError),
  'random-tree': strategyObject('random-tree', { ...uniformTreeFields }),
  entropy: strategyObject('entropy', { ...uniformTreeFields }),
};

type Schemas = typeof strategyOptionSchemas;
/** The built-in strategies' names (TRACE-SPEC §6); the family (registry.ts) holds these and any plugin's. */
export type StrategyName = keyof Schemas;
/** The options of strategy `N`, defaults filled (what its factory receives). */
export type OptionsOf<N extends StrategyName> = z.output<Schemas[N]>;
/** A strategy as a config names it: `{ name: 'trace', budget: 512, … }`. */
export type StrategyConfig = { [N in StrategyName]: OptionsOf<N> }[StrategyName];
export type StrategyConfigInput = { [N in StrategyName]: z.input<Schemas[N]> }[StrategyName];
/** The options of a named strategy without the name (createStrategy's second argument). */
export type StrategyOptionsInput<N extends StrategyName = StrategyName> = Omit<z.input<Schemas[N]>, 'name'>;

/**
 * Why an option is not accepted: it belongs to other built-in strategies (named) or to none (misspelt).
 * One message per unrecognised key; parseTrainConfig puts each under its own field path.
 */
export function foreignOptionMessage(name: string, key: string): string {
  const owners = (Object.keys(strategyOptionSchemas) as StrategyName[]).filter((n) => optionKeys(n).includes(key));
  const where = owners.length
    ? `; options named "${key}" apply to ${owners.length > 1 ? `${owners.slice(0, -1).join(', ')} and ${owners[owners.length - 1]}` : owners[0]} only`
    : ' (misspelt?)';
  const own = name in strategyOptionSchemas ? ` (it takes ${optionKeys(name as StrategyName).join(', ')})` : '';
  return `"${key}" is not an option of strategy ${name}${own}${where}`;
}

/** The option names strategy `name` takes (besides `name`). */
export function optionKeys(name: StrategyName): string[] {
  return Object.keys(strategyOptionSchemas[name].shape).filter((k) => k !== 'name');
}

/** The entries of `options` that strategy `name` takes: one set of options for several strategies (benches, tests). */
export function optionsFor<N extends StrategyName>(name: N, options: Record<string, unknown>): StrategyOptionsInput<N> {
  const keys = optionKeys(name);
  return Object.fromEntries(Object.entries(options).filter(([k]) => keys.includes(k))) as StrategyOptionsInput<N>;
}
