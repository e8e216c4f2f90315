/**
 * The policy family: one entry per kind (see PolicyKind in kind.ts), as src/env/registry.ts has one per
 * environment. Every command builds its policy here. Plugins (src/tinylm) register their kind with
 * `policyKinds.register`; policies that environments bring are in env-policies.ts. Each kind imports its
 * policy's code in its build, as the environment kinds do (EnvKind.build): the configuration schema,
 * which every command loads, needs only the settings.
 */
import path from 'node:path';
import { z } from 'zod';
import type { Simulator } from '../env/simulator/index.ts';
import type { Environment } from '../env/types.ts';
import { defineFamily, discriminatedSchema } from '../util/family.ts';
import { hasField, knownFields } from '../util/known-fields.ts';
import { clip, epochs, learningRate, normalise, sharedTurns, temperature } from './kind-fields.ts';
import { PolicyConfigError, policyKind, type PolicyBuildContext, type PolicyKind, type PolicyPlugins } from './kind.ts';
import { resolveApiKey } from './openai/api-key.ts';
import type { SimulatorTabularPolicy } from './simulator-tabular.ts';
import { TINKER_API_KEY_VARIABLES, tinkerSettings } from './tinker/settings.ts';
import type { Policy, TrainablePolicy } from './types.ts';

export { PolicyConfigError, type PolicyBuildContext } from './kind.ts';

const embedded = z.strictObject({
  kind: z.literal('embedded'),
  learningRate: learningRate(0.1),
  clip,
  epochs,
  normalise: normalise('turns'),
  sharedTurns,
  warmStart: z
    .enum(['bc', 'none'])
    .default('bc')
    .describe(
      'embedded policy on the world only: bc = start RL from behaviour cloning on scripted noisy demonstrations (an agent that searches before answering; seeded by policy.bc.seed, cached on disk by a hash of what determines it, so every arm and seed of a comparison starts from the same weights); none = the cold start (zero weights, uniform choices).',
    ),
  bc: z
    .strictObject({
      seed: z
        .number()
        .int()
        .min(0)
        .default(0)
        .describe(
          'Seed of the demonstrations (the fit itself is deterministic). Independent of the run seed on purpose: like one SFT checkpoint, every run and seed of a comparison starts RL from the same weights, and one fit is computed and cached once.',
        ),
      noise: z.number().min(0).max(1).default(0.35).describe('Base noise of the scripted demonstrator (look-alike detours, misreads).'),
      demosPerPrompt: z.number().int().min(1).default(2).describe('Sampled demonstration episodes per training question.'),
      epochs: z.number().int().min(1).default(100).describe('Full-batch Adam steps of the maximum-likelihood fit.'),
      learningRate: z.number().positive().default(0.1).describe('Adam step size of the fit.'),
    })
    .prefault({})
    .describe('Behaviour-cloning warm start (policy.warmStart: bc).'),
});

const simulatorTabular = z.strictObject({
  kind: z.literal('simulator-tabular'),
  learningRate: z
    .number()
    .positive()
    .default(100)
    .describe(
      'simulator-tabular: step size η of plain gradient ascent on the node logits, θ ← θ + η·∇L (no optimiser state; the surrogate is an average over the step’s samples, so η is large; 100 was chosen on development seeds).',
    ),
  clip,
  epochs: z
    .number()
    .int()
    .min(1)
    .default(1)
    .describe('simulator-tabular: gradient steps over each step’s samples (the clipped surrogate of each pass against the rollouts’ own log-probabilities).'),
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
  mode: z
    .enum(['completions', 'chat', 'tokens'])
    .default('completions')
    .describe(
      'openai: completions (one growing prompt), chat (the server applies its chat template) or tokens (token ids in and out: exact; needs the model’s tokenizer).',
    ),
  extras: z.enum(['none', 'vllm']).default('none').describe('openai: server-specific request extras: vllm asks for token ids; none sends plain OpenAI fields.'),
  temperature,
  apiKeyFile: z
    .string()
    .min(1)
    .optional()
    .describe(
      'openai: a file whose first line is the servers’ API key (sent as a Bearer token to every server, the tokenizer endpoint included). Without it the key comes from TRACE_RL_API_KEY, else OPENAI_API_KEY; never from a flag or this configuration, which is stored in the run (only the file’s path is).',
    ),
});

const BUILT_IN = [
  policyKind('embedded', embedded, {
    trainable: true,
    async build(_settings, { envKind, setup }) {
      if (!setup?.candidates)
        throw new PolicyConfigError(
          `policy.kind: the embedded policy has no candidate actions in env.kind ${envKind} (it needs a policy that writes text: policy.kind tiny-lm, or an OpenAI-compatible server through trace-rl rollout / eval)`,
        );
      const { EmbeddedPolicy } = await import('./embedded/index.ts');
      return new EmbeddedPolicy({ candidates: setup.candidates, ...(setup.features ? { features: setup.features } : {}) });
    },
    evaluatesRuns: true,
    spec: (_s, run) => ({ kind: 'embedded', run: run?.dir ?? null, step: run?.step ?? null }),
    describe: (_s, { run }) => (run ? `embedded policy of ${run.dir} after step ${run.step}` : 'untrained embedded policy (zero weights)'),
  }),
  policyKind('scripted', z.strictObject({ kind: z.literal('scripted') }), {
    trainable: false,
    async build(_settings, { envKind, setup }, envSettings) {
      const { envOwnPolicy, envPolicies } = await import('./env-policies.ts');
      const own = setup && envOwnPolicy(envKind, setup, envSettings);
      if (!own)
        throw new PolicyConfigError(
          `policy.kind: scripted is the environment's own policy, which env.kind ${envKind} does not have (${envPolicies.names().join(', ')} have one)`,
        );
      return own;
    },
    describe: (_s, { policy }) => `the environment's own ${policy.name} policy`,
  }),
  policyKind('openai', openai, {
    trainable: false,
    async build(settings, { transcript, environment }) {
      if (settings.mode === 'tokens' && !transcript)
        throw new PolicyConfigError('policy.mode tokens sends token ids to the model: it needs the model’s tokenizer (trace-rl rollout --tokenizer)');
      const key = resolveApiKey({ file: settings.apiKeyFile, env: environment ?? process.env });
      // Loaded here: its connection pool (undici) costs every command's start ~0.08 CPU-s otherwise.
      const { OpenAIPolicy } = await import('./openai/openai-policy.ts');
      return new OpenAIPolicy({
        baseURLs: settings.baseUrls,
        model: settings.model,
        mode: settings.mode,
        extras: settings.extras,
        temperature: settings.temperature,
        ...(key ? { apiKey: key.key } : {}),
        ...(transcript ? { transcript } : {}),
      });
    },
    fromFlags(flags, _run, sampled) {
      if (flags.mode !== 'completions' && flags.mode !== 'chat')
        throw new PolicyConfigError(`--mode ${flags.mode}: choose completions or chat (token mode is trace-rl rollout's, with --tokenizer)`);
      return {
        kind: 'openai',
        baseUrls: flags.baseUrl ?? [],
        model: flags.model ?? 'default',
        mode: flags.mode,
        ...(flags.apiKeyFile !== undefined ? { apiKeyFile: path.resolve(flags.apiKeyFile) } : {}),
        ...sampled,
      };
    },
    spec: (s) => ({ kind: 'openai', model: s.model, mode: s.mode }),
    describe: (s) => `${s.model} on ${s.baseUrls.length} OpenAI-compatible server(s) (${s.mode})`,
  }),
  policyKind('tinker', tinkerSettings, {
    trainable: true,
    async build(settings, { environment, sampleOnly }) {
      // Loaded here, not with the registry: the client's protobuf wire and the tokenizers cost every
      // other command's start ~0.1 CPU-s.
      const [{ loadTranscript }, { defaultEndOfTurn }, { TinkerPolicy }] = await Promise.all([
        import('../tokens/load.ts'),
        import('./tinker/end-of-turn.ts'),
        import('./tinker/tinker-policy.ts'),
      ]);
      const env = environment ?? process.env;
      // Only trace-rl's own variable and the SDK's: an OpenAI key is never sent to a training server.
      const key = resolveApiKey({ file: settings.apiKeyFile, env: { TRACE_RL_API_KEY: env.TRACE_RL_API_KEY ?? env[TINKER_API_KEY_VARIABLES[0]] } });
      // The tokenizer endpoint of `server` is the engine's own (trace-rl serve has /tokenize beside the Tinker API).
      const transcript = await loadTranscript(settings.tokenizer, { serverURL: settings.baseUrl, ...(key ? { apiKey: key.key } : {}) });
      const endOfTurn = settings.endOfTurn ?? defaultEndOfTurn(settings.tokenizer);
      const policy = new TinkerPolicy({
        baseURL: settings.baseUrl,
        baseModel: settings.model,
        loraRank: settings.loraRank,
        transcript,
        prompt: settings.prompt,
        temperature: settings.temperature,
        maxTokensPerTurn: settings.maxTokensPerTurn,
        stop: settings.stop,
        adam: settings.adam,
        ...(settings.contextLength ? { contextLength: settings.contextLength } : {}),
        ...(endOfTurn ? { endOfTurn } : {}),
        lossReduction: settings.lossReduction,
        ...(key ? { apiKey: key.key } : {}),
      });
      // The engine is asked what it serves and trains before any rollout: a wrong policy.model, or the
      // LoRA default rate on a full-weights engine, fails here.
      await policy.start();
      if (!sampleOnly) await policy.checkTraining(settings.learningRate);
      return policy;
    },
    fromFlags(flags, _run, sampled) {
      // The engine samples token ids through its own tokenizer: openai's text modes mean nothing here.
      if (flags.mode !== 'completions') throw new PolicyConfigError(`--mode ${flags.mode} is for --policy openai; drop it (a tinker engine samples token ids)`);
      if ((flags.baseUrl?.length ?? 0) > 1)
        throw new PolicyConfigError(`--base-url given ${flags.baseUrl!.length} times: a tinker policy samples from one engine; give one --base-url`);
      return {
        kind: 'tinker',
        ...(flags.baseUrl?.[0] !== undefined ? { baseUrl: flags.baseUrl[0] } : {}),
        ...(flags.model !== undefined ? { model: flags.model } : {}),
        ...(flags.apiKeyFile !== undefined ? { apiKeyFile: path.resolve(flags.apiKeyFile) } : {}),
        ...sampled,
      };
    },
    // What the samples depend on (the engine's address and key do not change them).
    spec: (s) => ({
      kind: 'tinker',
      model: s.model,
      tokenizer: s.tokenizer,
      prompt: s.prompt,
      maxTokensPerTurn: s.maxTokensPerTurn,
      stop: s.stop,
      endOfTurn: s.endOfTurn ?? null,
      contextLength: s.contextLength ?? null,
    }),
    describe: (s) => `${s.model} (base weights) sampled through the Tinker API at ${s.baseUrl}`,
  }),
  policyKind('simulator-tabular', simulatorTabular, {
    trainable: true,
    async build(_settings, { envKind, setup }) {
      const [{ Simulator }, { SimulatorTabularPolicy }] = await Promise.all([import('../env/simulator/index.ts'), import('./simulator-tabular.ts')]);
      if (!(setup?.env instanceof Simulator))
        throw new PolicyConfigError(`policy.kind: simulator-tabular holds one softmax per simulator node; it acts in env.kind simulator only, not ${envKind}`);
      return new SimulatorTabularPolicy(setup.env);
    },
    environment: (policy, setup) => (setup.env as unknown as Simulator).withPlayer(policy as SimulatorTabularPolicy) as Environment<unknown>,
    describe: () => 'untrained simulator tabular policy (the random policy)',
  }),
] as const;

/** The settings of a policy kind, defaults filled (config.policy): a built-in kind's or a plugin's. */
export type PolicyConfig = z.output<(typeof BUILT_IN)[number]['schema']> | PolicyPlugins[keyof PolicyPlugins];
export type PolicyKindName = PolicyConfig['kind'];
export type PolicySettings<K extends PolicyKindName> = Extract<PolicyConfig, { kind: K }>;
export const DEFAULT_POLICY_KIND = 'embedded';

/** Every policy kind; `register` adds a plugin's (src/tinylm), before configurations are parsed. */
export const policyKinds = defineFamily<PolicyKind>('policy kind', BUILT_IN as unknown as PolicyKind[]);

export const policyConfigSchema = z.preprocess(
  (v) => (v === undefined ? { kind: DEFAULT_POLICY_KIND } : typeof v === 'object' && v !== null && !('kind' in v) ? { kind: DEFAULT_POLICY_KIND, ...v } : v),
  discriminatedSchema(policyKinds, 'kind'),
) as unknown as z.ZodType<PolicyConfig, unknown>;

/**
 * The policy `settings` names, acting in the environment of `context`; `trainable` is set for kinds
 * training updates; `env` for kinds that change what the environment knows (see PolicyKind.environment).
 */
export async function buildPolicy(
  settings: { kind: string },
  context: PolicyBuildContext,
  envSettings: Record<string, unknown> = {},
): Promise<{ policy: Policy; trainable?: TrainablePolicy; env?: Environment<unknown> }> {
  const kind = policyKinds.get(settings.kind);
  const policy = await kind.build(settings, context, envSettings);
  const env = kind.environment && context.setup ? kind.environment(policy, context.setup) : undefined;
  return { policy, ...(kind.trainable ? { trainable: policy as TrainablePolicy } : {}), ...(env ? { env } : {}) };
}

/** The kind's settings of a stored run: fields it does not take (older runs stored every kind's) dropped. */
export function storedPolicySettings(settings: unknown): unknown {
  const kind = (settings as { kind?: unknown } | null)?.kind;
  return typeof kind === 'string' && policyKinds.has(kind) ? knownFields(policyKinds.get(kind).schema, settings) : settings;
}

/** The kinds that take a setting (a dotted path inside `policy`). */
export function policyKindsTaking(field: string): string[] {
  return policyKinds
    .entries()
    .filter((k) => hasField(k.schema, field))
    .map((k) => k.name);
}
