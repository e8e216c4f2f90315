import { z } from 'zod';
import { STRATEGY_NAMES, foreignOptionMessage, optionsFor, strategyConfigSchema, type StrategyName } from '../allocate/index.ts';
import { ESTIMATOR_NAMES } from '../advantage/index.ts';
import { engineSettingsSchema } from '../rollout/settings.ts';
import { UserError } from '../util/user-error.ts';

/** The strategy fields a config may leave out (a partial `strategy:` is completed from these; the rest are the named strategy's defaults). */
export const DEFAULT_STRATEGY = { name: 'trace', budget: 192 } as const;

/** The policy's Adam step size when the config gives none (the tiny LM's token-level update needs a far smaller one). */
export const POLICY_LEARNING_RATE = { embedded: 0.1, 'tiny-lm': 0.0003 } as const;

/**
 * The run configuration, written once: each field's description is its only documentation (the CLI
 * prints the resolved config; docs/configuration.md is generated from these descriptions). Unknown
 * strategy or estimator names fail here, before anything starts.
 */
export const trainConfigSchema = z
  .object({
    seed: z.number().int().min(0).default(0).describe('Seed of everything random in the run (world, sampling, predictor init); a run is reproducible from config + seed.'),
    steps: z.number().int().min(1).default(30).describe('Training steps.'),
    env: z
      .object({
        kind: z.enum(['world', 'simulator']).default('world').describe('world: the embedded multi-hop search world (trainable); simulator: prompts with exactly known success probabilities (policy fixed, for allocation/oracle studies).'),
        seed: z.number().int().min(0).default(7).describe('Seed of the generated world / simulator; fixed across the runs being compared, so every strategy sees the same questions.'),
        questions: z.number().int().min(10).default(1500).describe('Questions generated in the world (before the train/test split) or simulator prompts.'),
        testFraction: z.number().gt(0).lt(1).default(0.2).describe('Share of world questions held out for test accuracy.'),
        topK: z.number().int().min(1).default(3).describe('Documents returned per search.'),
        successRule: z.enum(['f1', 'em', 'f1-or-em']).default('f1').describe('Success for allocation and reward: token F1 ≥ threshold, or exact match.'),
        successThreshold: z.number().min(0).max(1).default(0.3).describe('F1 threshold of the f1 success rule (TRACE-SPEC §2).'),
      })
      .prefault({}),
    arm: z
      .string()
      .min(1)
      .optional()
      .describe('Label of this run’s arm in reports: runs with the same label are seeds of one arm (default: strategy.name), so several arms of one strategy (e.g. the ablation) appear side by side in one report.'),
    pool: z.number().int().min(1).default(64).describe('Candidate prompts drawn per step (the pool the root allocation chooses from).'),
    strategy: z
      .preprocess((v) => ({ ...DEFAULT_STRATEGY, ...(typeof v === 'object' && v !== null ? v : {}) }), strategyConfigSchema)
      .describe('Allocation strategy and its budget B in trajectories per step (name and budget not given: trace, B = 192; other fields not given take the named strategy’s defaults).'),
    estimator: z.enum(ESTIMATOR_NAMES).default('trace').describe('Advantage estimator (TRACE-SPEC §5).'),
    predictor: z
      .object({
        kind: z.enum(['mlp', 'beta', 'global']).default('mlp').describe('mlp: the shared learned predictor Ṽ(H); beta: per-prompt Beta-Bernoulli (roots only); global: the running success rate.'),
        hidden: z.array(z.number().int().min(1)).default([64, 32]).describe('Hidden layer widths of the mlp predictor.'),
        lr: z.number().positive().default(0.003).describe('Adam learning rate of the mlp predictor.'),
        replaySteps: z.number().int().min(1).default(4).describe('Steps of tree targets kept in the predictor’s replay window.'),
        useGold: z.boolean().default(true).describe('Let the mlp predictor’s structure features compare observations with the gold answer (known at training time in RLVR; it steers allocation only, never the policy). false = history text only.'),
      })
      .prefault({}),
    policy: z
      .object({
        kind: z.enum(['embedded', 'tiny-lm']).default('embedded').describe('embedded: the linear policy over candidate actions; tiny-lm: a llama model generating token-level Search-R1 turns with llama.cpp, trained in jax-js (docs/tinylm.md).'),
        model: z.string().optional().describe('tiny-lm only: the GGUF to start from (its vocabulary must be the world’s), e.g. bench/tinylm/warm-start.gguf from `npx tsx bench/tinylm/warm-start.ts`.'),
        learningRate: z.number().positive().optional().describe(`Adam step size of the policy update; the step passes it to the policy, which uses it as given. Default by kind: ${Object.entries(POLICY_LEARNING_RATE).map(([k, v]) => `${k} ${v}`).join(', ')}.`),
        clip: z.number().positive().default(0.2).describe('PPO clip ε of the clipped surrogate.'),
        epochs: z.number().int().min(1).default(4).describe('Passes (Adam steps) over each step’s samples.'),
      })
      // Strict, so a field that was renamed (lmLearningRate became learningRate) fails instead of being ignored.
      .strict()
      .prefault({})
      .refine((p) => p.kind !== 'tiny-lm' || p.model !== undefined, { message: 'policy.kind tiny-lm needs policy.model: a GGUF file (build one with `npx tsx bench/tinylm/warm-start.ts`)', path: ['model'] })
      .transform((p) => ({ ...p, learningRate: p.learningRate ?? POLICY_LEARNING_RATE[p.kind] })),
    engine: engineSettingsSchema.prefault({}),
    eval: z
      .object({
        every: z.number().int().min(1).default(5).describe('Evaluate greedy test accuracy every this many steps (and after the last step).'),
        questions: z.number().int().min(1).default(200).describe('Held-out test questions per evaluation (the first ones of the test split).'),
      })
      .prefault({}),
  })
  .strict();

export type TrainConfig = z.output<typeof trainConfigSchema>;
export type TrainConfigInput = z.input<typeof trainConfigSchema>;

/** Thrown for an invalid configuration; the message names each bad field by its path and the allowed values. */
export class ConfigError extends UserError {
  override name = 'ConfigError';
}

/**
 * Validates a configuration. `stored`: a config read back from a run folder; runs stored before each
 * strategy had its own options hold every strategy's defaults, so options the named strategy does not
 * take are dropped there (in a user's config they are an error).
 */
export function parseTrainConfig(input: unknown, options: { stored?: boolean } = {}): TrainConfig {
  const parsed = trainConfigSchema.safeParse(options.stored ? withoutForeignOptions(input) : input);
  if (parsed.success) return parsed.data;
  throw new ConfigError(
    parsed.error.issues
      // An unrecognised key is reported on its own field's path, not on the object holding it.
      // (A key that is not a plain name stays in the message only, so the path remains readable.)
      .flatMap((i) => (i.code === 'unrecognized_keys' ? i.keys.map((k) => ({ path: /^[A-Za-z_]\w*$/.test(k) ? [...i.path, k] : i.path, message: unknownKeyMessage(input, i.path, k) })) : [i]))
      .map((i) => `config${i.path.length ? '.' + i.path.join('.') : ''}: ${i.message}`)
      .join('; '),
  );
}

/** One message per unknown key: a strategy option names the strategies that take it; others are misspelt. */
function unknownKeyMessage(input: unknown, path: readonly PropertyKey[], key: string): string {
  const name = (input as { strategy?: { name?: unknown } } | undefined)?.strategy?.name ?? DEFAULT_STRATEGY.name;
  if (path.length === 1 && path[0] === 'strategy' && (STRATEGY_NAMES as readonly unknown[]).includes(name)) return foreignOptionMessage(name as StrategyName, key);
  return `unknown setting "${key}" (misspelt? docs/configuration.md lists every setting)`;
}

function withoutForeignOptions(input: unknown): unknown {
  const strategy = (input as { strategy?: Record<string, unknown> } | null)?.strategy;
  const name = strategy?.name;
  if (!strategy || !(STRATEGY_NAMES as readonly unknown[]).includes(name)) return input;
  return { ...(input as object), strategy: { name, ...optionsFor(name as StrategyName, strategy) } };
}
