import { z } from 'zod';
import { budgetProblem, STRATEGY_NAMES, foreignOptionMessage, optionsFor, strategyConfigSchema, type StrategyName } from '../allocate/index.ts';
import { ADVANTAGE_SCALES, ESTIMATOR_NAMES, isPerNodeEstimator } from '../advantage/index.ts';
import { engineSettingsSchema } from '../rollout/settings.ts';
import { UserError } from '../util/user-error.ts';
import { checkSource, parseSourceShorthand } from '../env/qa/sources.ts';

/**
 * env.datasets: names or JSONL files, as a list or one comma-separated string; each item a string
 * (`name`, `name*weight`, `name:eval`) or `{ source, weight, evalOnly }`. Unknown names and missing
 * files fail here, with the item's index.
 */
const qaDatasetsSchema = z
  .preprocess(
    (v) => (typeof v === 'string' ? v.split(',').map((x) => x.trim()).filter(Boolean) : v),
    z.array(
      z.union([
        z.string().min(1).transform(parseSourceShorthand),
        z.object({ source: z.string().min(1), weight: z.number().positive().default(1), evalOnly: z.boolean().default(false) }).strict(),
      ]).superRefine((d, ctx) => {
        const problem = checkSource(d.source);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
        if (!(d.weight > 0)) ctx.addIssue({ code: 'custom', message: `weight ${d.weight} must be a positive number` });
      }),
    ).min(1),
  )
  .prefault(['hotpotqa'])
  .describe('qa only: datasets — bundled names (hotpotqa, 2wiki, musique, bamboogle) or JSONL files (HotpotQA, 2Wiki, MuSiQue or {id, question, answer|answers} rows); `name*0.5` sets a mixing weight (share of its training questions; >1 repeats them), `name:eval` holds a dataset out entirely. A list, or one comma-separated string.');

/** Settings of the math environments (env.kind math / math-world). */
export const mathEnvSchema = z
  .object({
    dataset: z.string().default('gsm8k-train').describe('math: training prompts: gsm8k-train, gsm8k, math500, aime24, aime25, or a JSONL file ({"question"|"problem", "answer"} per line).'),
    problems: z.number().int().min(10).default(1200).describe('math-world: problems generated (before the train/test split by env.testFraction).'),
    noise: z.number().min(0).max(1).default(0.3).describe('math-world: noise of the scripted policy (policy.kind scripted).'),
    testDataset: z.string().default('gsm8k').describe('math: held-out prompts for evaluation (same choices as dataset).'),
    limit: z.number().int().min(1).optional().describe('math: use only the first this many prompts of each dataset.'),
    format: z.enum(['markdown', 'code-tag', 'tool-call']).default('markdown').describe('How the model writes code and sees its output: ```python / ```output fences, <code>/<interpreter>, or <tool_call>/<tool_response>.'),
    tool: z.enum(['pyodide', 'url', 'inline']).optional().describe('Code tool: pyodide (Python in WebAssembly, each trajectory in its own process confined by bubblewrap, seccomp and resource limits, offline; the default for math; docs/reliability.md), url (a SandboxFusion run_code server) or inline (math-world only, its default: the world\'s print(a op b) cells evaluated in-process with Python semantics).'),
    url: z.string().optional().describe('tool url only: base URL of the SandboxFusion server, e.g. http://localhost:8080.'),
    workers: z.number().int().min(1).default(1).describe('tool pyodide only: sandbox processes running cells in parallel (up to this).'),
    unsafeUnconfined: z.boolean().default(false).describe('tool pyodide only: run model-written code WITHOUT the operating system\'s confinement (no bubblewrap, seccomp or resource limits; Node\'s permission model only), for machines that cannot confine it. Unsafe with any model output: prefer installing bubblewrap or env.math.tool url.'),
    packagesDir: z.string().optional().describe('tool pyodide only: a directory of pure-Python packages (pip install --target DIR sympy mpmath) made importable in the sandbox.'),
    timeoutMs: z.number().int().min(100).default(5000).describe('Wall time per code cell (ms).'),
    memoryMb: z.number().int().min(32).default(256).describe('Python heap per interpreter (MB; pyodide) / memory_limit_MB sent to the url sandbox.'),
    outputBytes: z.number().int().min(64).default(16384).describe('stdout + stderr kept per cell; more stops the cell with an OutputLimitError.'),
  })
  .strict()
  .refine((m) => m.tool !== 'url' || m.url !== undefined, { message: 'env.math.tool url needs env.math.url (the SandboxFusion base URL)', path: ['url'] });

/** The strategy fields a config may leave out (a partial `strategy:` is completed from these; the rest are the named strategy's defaults). */
export const DEFAULT_STRATEGY = { name: 'trace', budget: 192 } as const;

/** The policy's Adam step size when the config gives none (the tiny LM's token-level update needs a far smaller one). */
export const POLICY_LEARNING_RATE = { embedded: 0.1, 'tiny-lm': 0.0003, scripted: 0 } as const;

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
        kind: z.enum(['world', 'simulator', 'qa', 'bfcl', 'math', 'math-world']).default('world').describe('world: the embedded multi-hop search world (trainable); simulator: prompts with exactly known success probabilities (policy fixed, for allocation/oracle studies); qa: real multi-hop QA (env.datasets) with Search-R1 retrieval (docs/environments.md); bfcl: BFCL v4 multi-turn function calling (800 entries, official checker; with the scripted noisy policy, fixed — set engine.maxTurns to about 60; docs/environments.md); math: tool-integrated math (GSM8K, MATH 500, AIME, any JSONL) with a Python code tool, for language-model policies (docs/environments.md); math-world: synthetic multi-step word problems for the embedded policy.'),
        seed: z.number().int().min(0).default(7).describe('Seed of the generated world / simulator; fixed across the runs being compared, so every strategy sees the same questions.'),
        questions: z.number().int().min(10).default(1500).describe('Questions generated in the world (before the train/test split) or simulator prompts.'),
        testFraction: z.number().gt(0).lt(1).default(0.2).describe('Share of world questions held out for test accuracy (qa: of each dataset, by a seeded shuffle).'),
        datasets: qaDatasetsSchema,
        retrieval: z.enum(['per-question', 'pooled', 'url']).default('per-question').describe('qa only: per-question = each question searches its own paragraphs (distractor setting; questions without paragraphs use the pooled index); pooled = one BM25 index over all paragraphs of env.datasets, cached on disk; url = a Search-R1-compatible retriever at env.retrieverUrl.'),
        retrieverUrl: z.string().url().optional().describe('qa with retrieval url: base URL of the retriever service (POST /retrieve), e.g. http://127.0.0.1:8000 from `trace-rl retriever serve`.'),
        retrieverTimeoutMs: z.number().positive().default(30_000).describe('qa with retrieval url: per-request timeout; a timeout, HTTP error or malformed reply is retried, then recorded on the turn as a tool error.'),
        cacheDir: z.string().optional().describe('qa: folder of the pooled BM25 index cache, keyed by a hash of the paragraphs (default $XDG_CACHE_HOME/trace-rl/bm25 or ~/.cache/trace-rl/bm25).'),
        topK: z.number().int().min(1).default(3).describe('Documents returned per search.'),
        successRule: z.enum(['f1', 'em', 'f1-or-em']).default('f1').describe('Success for allocation and reward: token F1 ≥ threshold, or exact match.'),
        successThreshold: z.number().min(0).max(1).default(0.3).describe('F1 threshold of the f1 success rule (TRACE-SPEC §2).'),
        prompt: z.enum(['search-r1', 'question']).default('search-r1').describe('World prompt text: search-r1 (instructions + question) or question (`Question: …` alone, what the tiny LM is trained on; use it when serving that model to an OpenAI policy).'),
        math: mathEnvSchema.prefault({}).describe('math and math-world only: datasets, code format and the code tool.'),
        // Optional with no default, so a configuration that does not set it parses (and hashes its warm start) exactly as before.
        world: z.object({ profile: z.enum(['default', 'late']).default('default') }).strict().optional().describe('world only: profile default = the world as it always was; late = the late-decision world: 3–4-hop bridge questions only (no comparisons), so several choices follow the first search, and a sparser warm start (the demonstrator noise is policy.bc.noise × 2, capped at 1). docs/environments.md.'),
      })
      .prefault({})
      .refine((e) => e.kind !== 'qa' || e.retrieval !== 'url' || e.retrieverUrl !== undefined, { message: 'retrieval url needs env.retrieverUrl, e.g. http://127.0.0.1:8000 (start one with `trace-rl retriever serve --dataset hotpotqa`)', path: ['retrieverUrl'] }),
    arm: z
      .string()
      .min(1)
      .optional()
      .describe('Label of this run’s arm in reports: runs with the same label are seeds of one arm (default: strategy.name), so several arms of one strategy (e.g. the ablation) appear side by side in one report.'),
    pool: z.number().int().min(1).default(64).describe('Candidate prompts drawn per step (the pool the root allocation chooses from).'),
    strategy: z
      .preprocess((v) => ({ ...DEFAULT_STRATEGY, ...(typeof v === 'object' && v !== null ? v : {}) }), strategyConfigSchema)
      .describe('Allocation strategy and its budget B in trajectories per step (name and budget not given: trace, B = 192; other fields not given take the named strategy’s defaults).'),
    estimator: z.enum(ESTIMATOR_NAMES).default('trace').describe('Advantage estimator (TRACE-SPEC §5; docs/advantages.md). trace keeps a prompt-level term below branch points; trace-local is the earlier rule, each turn compared only at the deepest branch point above it.'),
    advantageScale: z
      .enum(ADVANTAGE_SCALES)
      .default('std')
      .describe('grpo, tree-grpo, trace, trace-local: std = divide each group’s deviations by its std (GRPO, the paper); none = keep them unscaled (Dr. GRPO), so a rare outcome in a large or lopsided group (trees have both) does not dominate the update. treepo takes only std.'),
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
        kind: z.enum(['embedded', 'tiny-lm', 'scripted']).default('embedded').describe('embedded: the linear policy over candidate actions; tiny-lm: a llama model generating token-level Search-R1 turns with llama.cpp, trained in jax-js (docs/tinylm.md); scripted: math-world only, the fixed noisy solver (allocation studies; no update).'),
        model: z.string().optional().describe('tiny-lm only: the GGUF to start from (its vocabulary must be the world’s), e.g. bench/tinylm/warm-start.gguf from `npx tsx bench/tinylm/warm-start.ts`.'),
        learningRate: z.number().positive().optional().describe(`Adam step size of the policy update; the step passes it to the policy, which uses it as given. Default by kind: ${Object.entries(POLICY_LEARNING_RATE).map(([k, v]) => `${k} ${v}`).join(', ')}.`),
        temperature: z.number().positive().max(4).default(1).describe('tiny-lm only: sampling temperature τ of the rollouts (greedy evaluation is unaffected); the trainer’s log π is the same softmax(logits / τ), so the PPO ratio against the sampled log-probs stays exact. Below 1, rollouts stay closer to the greedy policy that evaluation measures.'),
        clip: z.number().positive().default(0.2).describe('PPO clip ε of the clipped surrogate.'),
        epochs: z.number().int().min(1).default(4).describe('Passes (Adam steps) over each step’s samples.'),
        sharedTurns: z.enum(['per-leaf', 'once']).default('per-leaf').describe('How a turn shared by several leaves of a tree (a prefix that was expanded) enters the policy loss: per-leaf (default) = once in every leaf’s sample, so a prefix with k leaves below it weighs k; once = one term per tree node (estimators trace and trace-local only, whose advantages are per node).'),
        warmStart: z.enum(['bc', 'none']).default('bc').describe('embedded policy on the world only: bc = start RL from behaviour cloning on scripted noisy demonstrations (an agent that searches before answering; seeded by policy.bc.seed, cached on disk by a hash of what determines it, so every arm and seed of a comparison starts from the same weights); none = the cold start (zero weights, uniform choices).'),
        bc: z
          .object({
            seed: z.number().int().min(0).default(0).describe('Seed of the demonstrations (the fit itself is deterministic). Independent of the run seed on purpose: like one SFT checkpoint, every run and seed of a comparison starts RL from the same weights, and one fit is computed and cached once.'),
            noise: z.number().min(0).max(1).default(0.35).describe('Base noise of the scripted demonstrator (look-alike detours, misreads).'),
            demosPerPrompt: z.number().int().min(1).default(2).describe('Sampled demonstration episodes per training question.'),
            epochs: z.number().int().min(1).default(100).describe('Full-batch Adam steps of the maximum-likelihood fit.'),
            learningRate: z.number().positive().default(0.1).describe('Adam step size of the fit.'),
          })
          .strict()
          .prefault({})
          .describe('Behaviour-cloning warm start (policy.warmStart: bc).'),
      })
      // Strict, so a field that was renamed (lmLearningRate became learningRate) fails instead of being ignored.
      .strict()
      .prefault({})
      .refine((p) => p.kind === 'tiny-lm' || p.temperature === 1, { message: 'policy.temperature is for policy.kind tiny-lm (the embedded policy samples at temperature 1)', path: ['temperature'] })
      .refine((p) => p.kind !== 'tiny-lm' || p.model !== undefined, { message: 'policy.kind tiny-lm needs policy.model: a GGUF file (build one with `npx tsx bench/tinylm/warm-start.ts`)', path: ['model'] })
      .transform((p) => ({ ...p, learningRate: p.learningRate ?? POLICY_LEARNING_RATE[p.kind] })),
    engine: engineSettingsSchema.prefault({}),
    eval: z
      .object({
        every: z.number().int().min(1).default(5).describe('Evaluate greedy test accuracy every this many steps (and after the last step).'),
        questions: z.number().int().min(1).default(200).describe('Held-out test questions per evaluation (the first ones of the test split).'),
        samples: z.number().int().min(0).max(64).default(0).describe('Sampled rollouts per held-out question at each evaluation, drawn as in training (the policy’s temperature); > 0 also logs test_accuracy_sampled, the mean success of those samples. 0 = greedy only.'),
      })
      .prefault({}),
  })
  .strict()
  // Every strategy must be able to spend its whole budget B each step (equal budgets, never a silent shortfall).
  .superRefine((c, ctx) => {
    const problem = budgetProblem(c.strategy, c.pool);
    if (problem) ctx.addIssue({ code: 'custom', path: ['strategy', 'budget'], message: problem });
    // Other estimators give a shared turn a different advantage in each leaf: counting it once would pick one arbitrarily.
    if (c.policy.sharedTurns === 'once' && !isPerNodeEstimator(c.estimator)) ctx.addIssue({ code: 'custom', path: ['policy', 'sharedTurns'], message: `once needs estimator trace or trace-local (per-node advantages), not ${c.estimator}` });
    if (c.advantageScale === 'none' && c.estimator === 'treepo') ctx.addIssue({ code: 'custom', path: ['advantageScale'], message: 'none applies to grpo, tree-grpo, trace and trace-local; treepo whitens over the batch by definition' });
  });

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
/**
 * The revision of what a stored configuration means, written into every new run (RunStore's
 * config_revision). 2: `estimator: trace` keeps a prompt-level term below branch points (issue 33);
 * runs of revision 1 meant today's `trace-local` by it.
 */
export const CONFIG_REVISION = 2;

/** A stored run's configuration, with its settings kept meaning what they meant when it was made. */
export function storedTrainConfig(store: { config(): unknown; configRevision(): number }): TrainConfig {
  const config = parseTrainConfig(store.config(), { stored: true });
  if (store.configRevision() < 2 && config.estimator === 'trace') return { ...config, estimator: 'trace-local' };
  return config;
}

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
