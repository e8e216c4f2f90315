import { z } from 'zod';
// The registries' own modules rather than the folders' index.ts: those also export the demo, the forest
// parsers and the like, which every command that parses a configuration would load for nothing.
import { budgetProblem } from '../allocate/budget-check.ts';
import { foreignOptionMessage } from '../allocate/options.ts';
import { strategies, strategyConfigSchema, strategyFromConfig } from '../allocate/registry.ts';
import { ADVANTAGE_SCALES } from '../advantage/group-stats.ts';
import { estimatorNames, isPerNodeEstimator, scaleProblem } from '../advantage/registry.ts';
import type { EstimatorName } from '../advantage/types.ts';
import { predictorKinds } from '../predict/registry.ts';
import { engineSettingsSchema } from '../rollout/settings.ts';
import { strategySplitRefusal } from '../rollout/split/refusal.ts';
import { UserError } from '../util/user-error.ts';
import { DEFAULT_ENV_KIND, envConfigSchema, envKinds, envKindsTaking } from '../env/registry.ts';
import { policyConfigSchema, policyKindsTaking } from '../policy/registry.ts';
import { migrateStoredConfig } from './migrations.ts';
// The tiny LM's policy kind registers itself, so every configuration accepts it.
import '../tinylm/policy-kind.ts';

/**
 * The strategy fields a config may leave out (a partial `strategy:` is completed from these; the rest are
 * the named strategy's defaults). defensive, because the pre-registered comparisons support it: where
 * the budget covers the pool it is grpo exactly, and over a larger pool it is unbiased for any predictor
 * and tied grpo at its best G on 40 fresh seeds. The default was trace before (stored configurations
 * without a strategy still read as the paper's trace).
 */
export const DEFAULT_STRATEGY = { name: 'defensive', budget: 192 } as const;

/**
 * The run configuration, written once: each field's description is its only documentation (the CLI
 * prints the resolved config; docs/configuration.md is generated from these descriptions). Unknown
 * strategy or estimator names fail here, before anything starts.
 */
export const trainConfigSchema = z
  .object({
    seed: z
      .number()
      .int()
      .min(0)
      .default(0)
      .describe('Seed of everything random in the run (world, sampling, predictor init); a run is reproducible from config + seed.'),
    steps: z.number().int().min(1).default(30).describe('Training steps.'),
    env: envConfigSchema.describe(
      "The environment: its kind and that kind's settings (src/env/registry.ts); a setting of another kind is an error. world: the embedded multi-hop search world (trainable); simulator: prompts with exactly known success probabilities (its random policy, fixed, for allocation/oracle studies; or policy.kind simulator-tabular, learnable, with exact J); qa: real multi-hop QA (env.datasets) with Search-R1 retrieval (docs/environments.md); bfcl: BFCL v4 multi-turn function calling (800 entries, official checker; with the scripted noisy policy, fixed — set engine.maxTurns to about 60; docs/environments.md); math: tool-integrated math (GSM8K, MATH 500, AIME, any JSONL) with a Python code tool, for language-model policies (docs/environments.md); math-world: synthetic multi-step word problems for the embedded policy; openenv, agentgym: an environment served over the wire (an OpenEnv WebSocket server, an AgentGym HTTP server), its tasks' first observations as prompts, continuations by a checked replay (docs/environments.md).",
    ),
    arm: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Label of this run’s arm in reports: runs with the same label are seeds of one arm (default: strategy.name), so several arms of one strategy (e.g. the ablation) appear side by side in one report.',
      ),
    pool: z.number().int().min(1).default(64).describe('Candidate prompts drawn per step (the pool the root allocation chooses from).'),
    strategy: z
      .preprocess((v) => ({ ...DEFAULT_STRATEGY, ...(typeof v === 'object' && v !== null ? v : {}) }), strategyConfigSchema)
      .describe(
        'Allocation strategy and its budget B in trajectories per step (name and budget not given: defensive, B = 192, which is grpo exactly while pool × G ≤ B; other fields not given take the named strategy’s defaults; docs/allocation.md §8 says which to run).',
      ),
    estimator: z
      .enum(estimatorNames() as [EstimatorName, ...EstimatorName[]])
      .default('trace')
      .describe(
        'Advantage estimator (TRACE-SPEC §5; docs/advantages.md). trace keeps a prompt-level term below branch points; trace-local is the earlier rule, each turn compared only at the deepest branch point above it.',
      ),
    advantageScale: z
      .enum(ADVANTAGE_SCALES)
      .default('std')
      .describe(
        'grpo, tree-grpo, trace, trace-local: std = divide each group’s deviations by its std (GRPO, the paper); none = keep them unscaled (Dr. GRPO), so a rare outcome in a large or lopsided group (trees have both) does not dominate the update. treepo takes only std.',
      ),
    predictor: z
      .object({
        kind: z
          .enum(predictorKinds.names() as [string, ...string[]])
          .default('mlp')
          .describe(
            `${predictorKinds
              .entries()
              .map((k) => `${k.name}: ${k.description}`)
              .join('; ')}.`,
          ),
        hidden: z.array(z.number().int().min(1)).default([64, 32]).describe('Hidden layer widths of the mlp predictor.'),
        lr: z.number().positive().default(0.003).describe('Adam learning rate of the mlp predictor.'),
        replaySteps: z.number().int().min(1).default(4).describe('Steps of tree targets kept in the predictor’s replay window.'),
        useGold: z
          .boolean()
          .default(true)
          .describe(
            'Let the mlp predictor’s structure features compare observations with the gold answer (known at training time in RLVR; it steers allocation only, never the policy). false = history text only.',
          ),
        questionFeatures: z
          .enum(['words', 'template'])
          .default('words')
          .describe(
            'What the mlp predictor hashes of the question (mlp and posterior): words = its words and word pairs, entity names included (the network can memorise names); template = its template, names (capitalised words) and numbers replaced by placeholders, so roots are told apart by what is asked, not about whom.',
          ),
        posterior: z
          .object({
            strength: z
              .number()
              .positive()
              .default(4)
              .describe(
                'k₀: weight of the mlp’s prediction μ in leaves; a root of prompt i gets Ṽ = (k₀·μ + Sᵢ) / (k₀ + Nᵢ), Sᵢ and Nᵢ its discounted successes and leaves from earlier steps. kind posterior only; do not combine with strategy.rootPrior: posterior, which would count the same root outcomes a second time.',
              ),
            discount: z
              .number()
              .gt(0)
              .max(1)
              .default(1)
              .describe('λ: a prompt’s counts are multiplied by λ each time it gets new evidence (1 = no discount; < 1 forgets as the policy changes).'),
            prefixes: z
              .enum(['none', 'shift'])
              .default('none')
              .describe(
                'none = a prefix gets the mlp’s prediction unchanged; shift = moved in log-odds by its prompt’s root residual logit(Ṽ root) − logit(μ root) (measured no better than none).',
              ),
          })
          .strict()
          .prefault({}),
      })
      .strict()
      .prefault({}),
    policy: policyConfigSchema.describe(
      "The policy: its kind and that kind's settings (src/policy/registry.ts); a setting of another kind is an error. embedded: the linear policy over candidate actions; tiny-lm: a llama model generating token-level Search-R1 turns with llama.cpp, trained in jax-js (docs/tinylm.md); scripted: the environment's own fixed policy (math-world's noisy solver; the simulator, unless policy.kind is simulator-tabular, and bfcl act with theirs whatever is configured), for allocation studies, no update; openai: an OpenAI-compatible server (trace-rl rollout and eval; its weights are trained outside); tinker: a Tinker-compatible training engine that samples and trains while trace-rl runs the loop (docs/tinker.md); simulator-tabular: the simulator's learnable policy, one softmax per simulator node started at its random policy, whose exact success probabilities allocation (oracle) and evaluation (test_accuracy_exact, train_accuracy_exact) read.",
    ),
    engine: engineSettingsSchema.prefault({}),
    eval: z
      .object({
        every: z.number().int().min(1).default(5).describe('Evaluate greedy test accuracy every this many steps (and after the last step).'),
        questions: z.number().int().min(1).default(200).describe('Held-out test questions per evaluation (the first ones of the test split).'),
        samples: z
          .number()
          .int()
          .min(0)
          .max(64)
          .default(0)
          .describe(
            'Sampled rollouts per held-out question at each evaluation, drawn as in training (the policy’s temperature); > 0 also logs test_accuracy_sampled, the mean success of those samples. 0 = greedy only.',
          ),
      })
      .prefault({}),
  })
  .strict()
  // Every strategy must be able to spend its whole budget B each step (equal budgets, never a silent shortfall).
  .superRefine((c, ctx) => {
    const problem = budgetProblem(c.strategy, c.pool);
    if (problem) ctx.addIssue({ code: 'custom', path: ['strategy', 'budget'], message: problem });
    // Other estimators give a shared turn a different advantage in each leaf: counting it once would pick one arbitrarily.
    if ('sharedTurns' in c.policy && c.policy.sharedTurns === 'once' && !isPerNodeEstimator(c.estimator))
      ctx.addIssue({
        code: 'custom',
        path: ['policy', 'sharedTurns'],
        message: `once needs estimator trace or trace-local (per-node advantages), not ${c.estimator}`,
      });
    const scale = scaleProblem(c.estimator, c.advantageScale);
    if (scale) ctx.addIssue({ code: 'custom', path: ['advantageScale'], message: scale });
    // Refused here rather than at the first step, so nothing is written for a run that cannot split.
    const split = c.engine.workers > 1 ? strategySplitRefusal(strategyFromConfig(c.strategy)) : undefined;
    if (split) ctx.addIssue({ code: 'custom', path: ['engine', 'workers'], message: `${split}; or set engine.workers: 1` });
    const shared = c.engine.workers > 1 ? workerEnv(c) : undefined;
    if (typeof shared === 'string') ctx.addIssue({ code: 'custom', path: ['engine', 'workers'], message: shared });
  });

/**
 * The env settings each rollout worker builds with (engine.workers > 1): the kind's share of what the
 * workers must share (env/kind.ts forWorkers: a server's sessions), and whether it takes the
 * coordinator's prompts; else the settings as they are. A string when the kind cannot be shared over
 * that many workers.
 */
export function workerEnv<E extends { kind: string }>(c: { env: E; engine: { workers: number } }): { env: E; prompts: boolean } | string {
  const share = envKinds.has(c.env.kind) ? envKinds.get(c.env.kind).forWorkers : undefined;
  if (!share) return { env: c.env, prompts: false };
  const env = share(c.env, c.engine.workers);
  return typeof env === 'string' ? env : { env: env as E, prompts: true };
}

export type TrainConfig = z.output<typeof trainConfigSchema>;
export type TrainConfigInput = z.input<typeof trainConfigSchema>;

/** Thrown for an invalid configuration; the message names each bad field by its path and the allowed values. */
export class ConfigError extends UserError {
  override name = 'ConfigError';
}

/**
 * The revision of what a stored configuration means, written into every new run (RunStore's
 * config_revision), so a stored run keeps meaning what it meant when it was made. 2: `estimator: trace`
 * keeps a prompt-level term below branch points; runs of revision 1 meant today's `trace-local` by it.
 */
export const CONFIG_REVISION = 2;

/** A stored run's configuration, with its settings kept meaning what they meant when it was made. */
export function storedTrainConfig(store: { config(): unknown; configRevision(): number }): TrainConfig {
  return parseTrainConfig(store.config(), { stored: true, revision: store.configRevision() });
}

/**
 * Validates a configuration. `stored`: a config read back from a run folder (of config revision
 * `revision`, default today's), read through the numbered migrations (migrations.ts) so it means what
 * it meant when it ran; options and settings a user's config may not hold are errors there.
 */
export function parseTrainConfig(input: unknown, options: { stored?: boolean; revision?: number } = {}): TrainConfig {
  const parsed = trainConfigSchema.safeParse(options.stored ? migrateStoredConfig(input, options.revision ?? CONFIG_REVISION) : withDefaultPreset(input));
  if (parsed.success) return parsed.data;
  throw new ConfigError(
    parsed.error.issues
      // An unrecognised key is reported on its own field's path, not on the object holding it.
      // (A key that is not a plain name stays in the message only, so the path remains readable.)
      .flatMap((i) =>
        i.code === 'unrecognized_keys'
          ? i.keys.map((k) => ({ path: /^[A-Za-z_]\w*$/.test(k) ? [...i.path, k] : i.path, message: unknownKeyMessage(input, i.path, k) }))
          : [i],
      )
      .map((i) => `config${i.path.length ? '.' + i.path.join('.') : ''}: ${i.message}`)
      .join('; '),
  );
}

/** One message per unknown key: a strategy option names the strategies that take it; others are misspelt. */
function unknownKeyMessage(input: unknown, path: readonly PropertyKey[], key: string): string {
  const name = (input as { strategy?: { name?: unknown } } | undefined)?.strategy?.name ?? DEFAULT_STRATEGY.name;
  if (path.length === 1 && path[0] === 'strategy' && typeof name === 'string' && strategies.has(name)) return foreignOptionMessage(name, key);
  if (path[0] === 'env' || path[0] === 'policy') return otherKindMessage(input, path, key);
  return `unknown setting "${key}" (misspelt? docs/configuration.md lists every setting)`;
}

/** A field of env or policy (or env.math) that the chosen kind does not take: which kinds take it, if any. */
function otherKindMessage(input: unknown, path: readonly PropertyKey[], key: string): string {
  const family = path[0] as 'env' | 'policy';
  const kind = ((input as Record<string, { kind?: unknown } | undefined> | undefined)?.[family]?.kind ??
    (family === 'env' ? DEFAULT_ENV_KIND : 'embedded')) as string;
  const field = [...path.slice(1), key].join('.');
  const owners = (family === 'env' ? envKindsTaking : policyKindsTaking)(field).filter((k) => k !== kind);
  return `"${key}" is not a setting of ${family}.kind ${kind}${owners.length ? ` (${owners.join(', ')} ${owners.length > 1 ? 'take' : 'takes'} it)` : ' (misspelt? docs/configuration.md lists every setting)'}`;
}

/**
 * A user's config that names trace without a preset runs the recommended one: what the evidence supports,
 * not the paper's configuration, which `preset: paper` names. Stored configs are left alone: they hold
 * every field, and those stored before presets existed meant the paper by an absent one.
 */
function withDefaultPreset(input: unknown): unknown {
  if (typeof input !== 'object' || input === null) return input;
  const strategy = (input as { strategy?: unknown }).strategy;
  if (typeof strategy !== 'object' || strategy === null) return input;
  const s = strategy as Record<string, unknown>;
  if (s.name !== 'trace' || 'preset' in s) return input;
  return { ...input, strategy: { ...s, preset: 'recommended' } };
}
