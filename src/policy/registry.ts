/**
 * The policy family: one entry per kind, as src/env/registry.ts has one per environment. An entry is
 * a strict zod schema of that kind's settings (`policy:` of a run configuration, or the flags of
 * `trace-rl eval` / `rollout`), whether training can update it, and a `build` from the settings and
 * the environment it acts in. Every command builds its policy here.
 *
 * Policies that belong to an environment kind (ENV_POLICIES) are attached here rather than in
 * src/env, so environments never depend on policies.
 */
import { z } from 'zod';
import type { EnvironmentSetup } from '../env/registry.ts';
import type { BfclEnv } from '../env/bfcl/index.ts';
import { Simulator } from '../env/simulator.ts';
import type { Environment } from '../env/types.ts';
import type { Transcript } from '../tokens/index.ts';
import { hasField, knownFields } from '../util/known-fields.ts';
import { UserError } from '../util/user-error.ts';
import { ScriptedBfclPolicy } from './bfcl-scripted-policy.ts';
import { EmbeddedPolicy } from './embedded/index.ts';
import { ScriptedMathWorldPolicy } from './math-world-policy.ts';
import { OpenAIPolicy } from './openai/index.ts';
import { resolveApiKey } from './openai/api-key.ts';
import { SimulatorPolicy } from './simulator-policy.ts';
import { SimulatorTabularPolicy } from './simulator-tabular.ts';
import { NORMALISATIONS, type Normalise } from './surrogate.ts';
import type { Policy, TrainablePolicy } from './types.ts';

/** A policy that cannot be built from its settings where it was asked for; the message says why. */
export class PolicyConfigError extends UserError {
  override name = 'PolicyConfigError';
}

// Settings several kinds take, each described once.
const learningRate = (value: number) => z.number().positive().default(value).describe(`Adam step size of the policy update; the step passes it to the policy, which uses it as given (default ${value} for this kind: the tiny LM's token-level update needs a far smaller one).`);
const clip = z.number().positive().default(0.2).describe('PPO clip ε of the clipped surrogate.');
const epochs = z.number().int().min(1).default(4).describe('Passes (Adam steps) over each step’s samples.');
const normalise = (value: Normalise) =>
  z
    .enum(NORMALISATIONS)
    .default(value)
    .describe(`What the clipped surrogate's sum is divided by (default ${value} for this kind): turns = the turns (the tiny LM: tokens) with a nonzero advantage, so a step is the same size however little contrast it found; samples = the number of samples (one per rewarded leaf), REINFORCE's (1/B) Σ A ∇log π, so every mixed group adds to the step; batch = every sampled turn (token) of the step, zero-advantage ones included, verl's token-mean. It decides whether an allocator's extra contrast can show up in the update at all.`);
const sharedTurns = z.enum(['per-leaf', 'once', 'importance']).default('per-leaf').describe('How a turn shared by several leaves of a tree (a prefix that was expanded) enters the policy loss: per-leaf (default, as Tree-GRPO and TreePO) = once in every leaf’s sample, so a prefix with k leaves below it weighs k; once = one term per tree node (estimators trace and trace-local only, whose advantages are per node); importance = each leaf weighted by Π 1/children over the branch points on its path, so the leaves grown from one bare rollout weigh together as that rollout and expanded prefixes are not over-counted (with outcome-blind branching, strategy.prefixValue, the branch points do not depend on the outcomes below them either).');

const embedded = z.strictObject({
  kind: z.literal('embedded'),
  learningRate: learningRate(0.1),
  clip,
  epochs,
  normalise: normalise('turns'),
  sharedTurns,
  warmStart: z.enum(['bc', 'none']).default('bc').describe('embedded policy on the world only: bc = start RL from behaviour cloning on scripted noisy demonstrations (an agent that searches before answering; seeded by policy.bc.seed, cached on disk by a hash of what determines it, so every arm and seed of a comparison starts from the same weights); none = the cold start (zero weights, uniform choices).'),
  bc: z
    .strictObject({
      seed: z.number().int().min(0).default(0).describe('Seed of the demonstrations (the fit itself is deterministic). Independent of the run seed on purpose: like one SFT checkpoint, every run and seed of a comparison starts RL from the same weights, and one fit is computed and cached once.'),
      noise: z.number().min(0).max(1).default(0.35).describe('Base noise of the scripted demonstrator (look-alike detours, misreads).'),
      demosPerPrompt: z.number().int().min(1).default(2).describe('Sampled demonstration episodes per training question.'),
      epochs: z.number().int().min(1).default(100).describe('Full-batch Adam steps of the maximum-likelihood fit.'),
      learningRate: z.number().positive().default(0.1).describe('Adam step size of the fit.'),
    })
    .prefault({})
    .describe('Behaviour-cloning warm start (policy.warmStart: bc).'),
});

const tinyLm = z.strictObject({
  kind: z.literal('tiny-lm'),
  model: z.string({ error: 'policy.kind tiny-lm needs policy.model: a GGUF file whose vocabulary is the world’s (docs/tinylm.md says how to build one)' }).describe('tiny-lm: the GGUF to start from (its vocabulary must be the world’s; docs/tinylm.md says how to build one).'),
  learningRate: learningRate(0.0003),
  temperature: z.number().positive().max(4).default(1).describe('tiny-lm and openai: sampling temperature τ of the rollouts (greedy evaluation is unaffected); the trainer’s log π is the same softmax(logits / τ), so the PPO ratio against the sampled log-probs stays exact. Below 1, rollouts stay closer to the greedy policy that evaluation measures.'),
  clip,
  epochs,
  normalise: normalise('turns'),
  sharedTurns,
});

const scripted = z.strictObject({ kind: z.literal('scripted') });

const simulatorTabular = z.strictObject({
  kind: z.literal('simulator-tabular'),
  learningRate: z.number().positive().default(100).describe('simulator-tabular: step size η of plain gradient ascent on the node logits, θ ← θ + η·∇L (no optimiser state; the surrogate is an average over the step’s samples, so η is large; 100 was chosen on development seeds, bench/compare/experiments.ts SIM_LEARN).'),
  clip,
  epochs: z.number().int().min(1).default(1).describe('simulator-tabular: gradient steps over each step’s samples (the clipped surrogate of each pass against the rollouts’ own log-probabilities).'),
  normalise: normalise('samples'),
  sharedTurns,
});

const openai = z.strictObject({
  kind: z.literal('openai'),
  baseUrls: z
    .array(z.string().refine((u) => URL.canParse(u) && /^https?:$/.test(new URL(u).protocol), 'not an http(s) URL; use e.g. http://localhost:8000/v1'))
    .min(1, 'needs at least one server base URL, e.g. http://localhost:8000/v1')
    .describe('openai: server base URLs such as http://localhost:8000/v1 (requests go to the least-loaded one).'),
  model: z.string().min(1).default('default').describe('openai: model name sent to the server.'),
  mode: z.enum(['completions', 'chat', 'tokens']).default('completions').describe('openai: completions (one growing prompt), chat (the server applies its chat template) or tokens (token ids in and out: exact; needs the model’s tokenizer).'),
  extras: z.enum(['none', 'vllm']).default('none').describe('openai: server-specific request extras: vllm asks for token ids; none sends plain OpenAI fields.'),
  temperature: z.number().positive().max(4).default(1).describe('tiny-lm and openai: sampling temperature τ of the rollouts (greedy evaluation is unaffected); the trainer’s log π is the same softmax(logits / τ), so the PPO ratio against the sampled log-probs stays exact. Below 1, rollouts stay closer to the greedy policy that evaluation measures.'),
  apiKeyFile: z.string().min(1).optional().describe('openai: a file whose first line is the servers’ API key (sent as a Bearer token to every server, the tokenizer endpoint included). Without it the key comes from TRACE_RL_API_KEY, else OPENAI_API_KEY; never from a flag or this configuration, which is stored in the run (only the file’s path is).'),
});

export const policyConfigSchema = z.preprocess(
  (v) => (v === undefined ? { kind: 'embedded' } : typeof v === 'object' && v !== null && !('kind' in v) ? { kind: 'embedded', ...v } : v),
  z.discriminatedUnion('kind', [embedded, tinyLm, scripted, openai, simulatorTabular], { error: (issue) => (issue.code === 'invalid_union' ? 'Invalid option: expected one of "embedded"|"tiny-lm"|"scripted"|"openai"|"simulator-tabular"' : undefined) }),
);

export type PolicyConfig = z.output<typeof policyConfigSchema>;
export type PolicyKindName = PolicyConfig['kind'];
export type PolicySettings<K extends PolicyKindName> = Extract<PolicyConfig, { kind: K }>;
export const POLICY_KIND_SCHEMAS = { embedded, 'tiny-lm': tinyLm, scripted, openai, 'simulator-tabular': simulatorTabular } as const;

/** What a policy acts in and with: the environment and how many calls are in flight. */
export interface PolicyBuildContext {
  envKind: string;
  /** The built environment; kinds that act through it (embedded, scripted) need it, a server does not. */
  setup?: EnvironmentSetup;
  /** Policy calls the engine keeps in flight (the tiny LM decodes that many sequences in one batch). */
  concurrency: number;
  /** Token mode of an OpenAI-compatible server: the model's tokenizer and template. */
  transcript?: Transcript;
  /** Where openai's API key variables are read (default process.env; see policy/openai/api-key.ts). */
  environment?: Readonly<Record<string, string | undefined>>;
}

/**
 * Policies an environment kind brings: `fixed` acts there whatever policy is configured, except the
 * kinds in `replacedBy`, written for that environment (the simulator's known-probability policy, which
 * its learnable tabular policy replaces; BFCL's scripted caller, since no trainable policy here can
 * call its functions); `scripted` is what `policy.kind: scripted` means there.
 */
export const ENV_POLICIES: Record<string, { fixed?: (setup: EnvironmentSetup) => Policy; replacedBy?: readonly PolicyKindName[]; scripted?: (setup: EnvironmentSetup, envSettings: Record<string, unknown>) => Policy }> = {
  simulator: { fixed: (s) => new SimulatorPolicy(s.env as unknown as Simulator), replacedBy: ['simulator-tabular'] },
  bfcl: { fixed: (s) => new ScriptedBfclPolicy(s.env as unknown as BfclEnv) },
  'math-world': { scripted: (_s, env) => new ScriptedMathWorldPolicy({ noise: (env.math as { noise: number }).noise }) },
};

/** The environment's fixed policy, unless the configured kind is one written to replace it there. */
export function envFixedPolicy(envKind: string, setup: EnvironmentSetup, configured: PolicyKindName): Policy | undefined {
  const own = ENV_POLICIES[envKind];
  return own?.replacedBy?.includes(configured) ? undefined : own?.fixed?.(setup);
}

/** The environment's own policy (fixed, else scripted), when it has one: what `policy.kind: scripted` means. */
export function envOwnPolicy(envKind: string, setup: EnvironmentSetup, envSettings: Record<string, unknown>): Policy | undefined {
  const own = ENV_POLICIES[envKind];
  return own?.fixed?.(setup) ?? own?.scripted?.(setup, envSettings);
}

interface PolicyKind<K extends PolicyKindName> {
  /** Training updates it (the step passes learningRate, clip and epochs). */
  trainable: boolean;
  build(settings: PolicySettings<K>, context: PolicyBuildContext, envSettings: Record<string, unknown>): Promise<Policy>;
  /**
   * The environment as this policy's runs see it, when the policy changes what it knows: the
   * simulator whose exact success probabilities (allocation's true p, exact J) are this policy's.
   */
  environment?(policy: Policy, setup: EnvironmentSetup): Environment<unknown>;
}

export const POLICY_KINDS: { [K in PolicyKindName]: PolicyKind<K> } = {
  embedded: {
    trainable: true,
    async build(_settings, { envKind, setup }) {
      if (!setup?.candidates) throw new PolicyConfigError(`policy.kind: the embedded policy has no candidate actions in env.kind ${envKind} (it needs a policy that writes text: policy.kind tiny-lm, or an OpenAI-compatible server through trace-rl rollout / eval)`);
      return new EmbeddedPolicy({ candidates: setup.candidates });
    },
  },
  'tiny-lm': {
    trainable: true,
    async build(settings, { envKind, concurrency }) {
      if (envKind === 'math-world') throw new PolicyConfigError('policy.kind: env.kind math-world is for the embedded or scripted policy; use env.kind math for a language model');
      return loadTinyLm(settings.model, { concurrency, temperature: settings.temperature });
    },
  },
  scripted: {
    trainable: false,
    async build(_settings, { envKind, setup }, envSettings) {
      const own = setup && envOwnPolicy(envKind, setup, envSettings);
      if (!own) throw new PolicyConfigError(`policy.kind: scripted is the environment's own policy, which env.kind ${envKind} does not have (the simulator, bfcl and math-world have one)`);
      return own;
    },
  },
  'simulator-tabular': {
    trainable: true,
    async build(settings, { envKind, setup }) {
      if (envKind !== 'simulator' || !(setup?.env instanceof Simulator)) throw new PolicyConfigError(`policy.kind: simulator-tabular holds one softmax per simulator node; it acts in env.kind simulator only, not ${envKind}`);
      return new SimulatorTabularPolicy(setup.env);
    },
    environment: (policy, setup) => (setup.env as unknown as Simulator).withPlayer(policy as SimulatorTabularPolicy) as Environment<unknown>,
  },
  openai: {
    trainable: false,
    async build(settings, { transcript, environment }) {
      if (settings.mode === 'tokens' && !transcript) throw new PolicyConfigError('policy.mode tokens sends token ids to the model: it needs the model’s tokenizer (trace-rl rollout --tokenizer)');
      const key = resolveApiKey({ file: settings.apiKeyFile, env: environment ?? process.env });
      return new OpenAIPolicy({ baseURLs: settings.baseUrls, model: settings.model, mode: settings.mode, extras: settings.extras, temperature: settings.temperature, ...(key ? { apiKey: key.key } : {}), ...(transcript ? { transcript } : {}) });
    },
  },
};

/**
 * The policy `settings` names, acting in the environment of `context`; `trainable` is set for kinds
 * training updates; `env` for kinds that change what the environment knows (see PolicyKind.environment).
 */
export async function buildPolicy(settings: PolicyConfig, context: PolicyBuildContext, envSettings: Record<string, unknown> = {}): Promise<{ policy: Policy; trainable?: TrainablePolicy; env?: Environment<unknown> }> {
  const kind = POLICY_KINDS[settings.kind] as PolicyKind<PolicyKindName>;
  const policy = await kind.build(settings, context, envSettings);
  const env = kind.environment && context.setup ? kind.environment(policy, context.setup) : undefined;
  return { policy, ...(kind.trainable ? { trainable: policy as TrainablePolicy } : {}), ...(env ? { env } : {}) };
}

/**
 * The tiny LM from its GGUF, checked before it is read whole (a device or a header bomb is refused).
 * Imported lazily: node-llama-cpp and jax-js are heavy. One llama.cpp sequence per call in flight.
 */
export async function loadTinyLm(file: string, options: { concurrency: number; temperature?: number }): Promise<TrainablePolicy> {
  const { readFileSync } = await import('node:fs');
  const { checkGgufFile, GgufFileError } = await import('../tinylm/gguf-file.ts');
  try {
    checkGgufFile(file);
  } catch (e) {
    if (e instanceof GgufFileError) throw new PolicyConfigError(`policy.model (--model) ${file}: ${e.message}`);
    throw e;
  }
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(readFileSync(file));
  } catch {
    throw new PolicyConfigError(`policy.model (--model) ${file}: cannot read that file`);
  }
  const { sequencesFor, TinyLmPolicy } = await import('../tinylm/index.ts');
  const { initJax } = await import('../util/jax.ts');
  await initJax();
  return TinyLmPolicy.fromBytes(bytes, { sequences: sequencesFor(options.concurrency), ...(options.temperature !== undefined ? { temperature: options.temperature } : {}) }, file);
}

/** The kind's settings of a stored run: fields it does not take (older runs stored every kind's) dropped. */
export function storedPolicySettings(settings: unknown): unknown {
  const kind = (settings as { kind?: unknown } | null)?.kind;
  const schema = (POLICY_KIND_SCHEMAS as Record<string, z.ZodType>)[String(kind)];
  return schema ? knownFields(schema, settings) : settings;
}

/** The kinds that take a setting (a dotted path inside `policy`). */
export function policyKindsTaking(field: string): string[] {
  return Object.entries(POLICY_KIND_SCHEMAS).filter(([, schema]) => hasField(schema, field)).map(([kind]) => kind);
}
