/**
 * What a policy kind is (`policy:` of a run configuration, `--policy` of `trace-rl eval`), and what an
 * environment kind brings of its own policies. Everything specific to a kind is a field here, so the
 * commands and the training loop ask the entry and never switch on a kind's name. A plugin's kind
 * (src/tinylm) registers into the family of registry.ts and adds its settings' type to
 * `PolicyPlugins` by declaration merging, so nothing here imports it.
 */
import { z } from 'zod';
import type { EnvironmentSetup } from '../env/kind.ts';
import type { Environment } from '../env/types.ts';
import type { Transcript } from '../tokens/index.ts';
import { UserError } from '../util/user-error.ts';
import type { Policy } from './types.ts';

/** A policy that cannot be built from its settings where it was asked for; the message says why. */
export class PolicyConfigError extends UserError {
  override name = 'PolicyConfigError';
}

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
  /**
   * The command only samples (`trace-rl eval`, `diagnose`): checks of what an update would do are
   * skipped (tinker's step size on a full-weights engine), since none runs.
   */
  sampleOnly?: boolean;
}

/** A training run whose last policy checkpoint `trace-rl eval --run` evaluates. */
export interface TrainedRun {
  dir: string;
  step: number;
  /** The run's policy settings. */
  policy: { kind: string } & Record<string, unknown>;
}

/** The policy flags of `trace-rl eval` / `diagnose`, as given (`--set policy.*` pairs apply after them). */
export interface PolicyFlags {
  baseUrl?: string[];
  model?: string;
  mode: string;
  apiKeyFile?: string;
}

export interface PolicyKind<K extends string = string, S extends { kind: K } = { kind: K }> {
  name: K;
  /** Strict: a field this kind does not take is an error. Its `kind` is `z.literal(name)`. */
  schema: z.ZodType<S, { kind: K }>;
  /** Training updates it (the step passes learningRate, clip and epochs). */
  trainable: boolean;
  build(settings: S, context: PolicyBuildContext, envSettings: Record<string, unknown>): Promise<Policy>;
  /**
   * The environment as this policy's runs see it, when the policy changes what it knows: the
   * simulator whose exact success probabilities (allocation's true p, exact J) are this policy's.
   */
  environment?(policy: Policy, setup: EnvironmentSetup): Environment<unknown>;
  /** Checked before a training run starts (and prints anything): a missing model file, say. */
  checkBeforeRun?(settings: S): Promise<void>;
  /** `trace-rl eval --run` evaluates a training run's checkpoint of this kind. */
  evaluatesRuns?: true;
  /**
   * The settings `trace-rl eval --policy <name>` means with these flags (absent: `{ kind }` alone);
   * `sampled` is `{ temperature }` when the evaluation samples. A flag it cannot take is a PolicyConfigError.
   */
  fromFlags?(flags: PolicyFlags, run: TrainedRun | undefined, sampled: { temperature?: number }): Record<string, unknown>;
  /** What an evaluation's results depend on of this policy (its spec; absent: `{ kind }`). */
  spec?(settings: S, run: TrainedRun | undefined): Record<string, unknown>;
  /** The policy in words, for the evaluation's page and log. */
  describe(settings: S, about: { policy: Policy; run?: TrainedRun; concurrency: number }): string;
}

/**
 * The settings' types of plugin kinds, by kind name. A plugin adds its own (`declare module
 * '…/policy/kind.ts' { interface PolicyPlugins { 'my-kind': MySettings } }`).
 */
export interface PolicyPlugins {}

/** Defines a kind with its settings' types read from its schema. */
export function policyKind<K extends string, T extends z.ZodType<{ kind: K }, { kind: K }>>(
  name: K,
  schema: T,
  rest: Omit<PolicyKind<K, z.output<T>>, 'name' | 'schema'>,
): PolicyKind<K, z.output<T>> {
  return { name, schema: schema as unknown as z.ZodType<z.output<T>, { kind: K }>, ...rest };
}

/**
 * Policies an environment kind brings (the entry's name is that environment kind's): `fixed` acts
 * there whatever policy is configured, except the kinds in `replacedBy`, written for that environment;
 * `scripted` is what `policy.kind: scripted` means there.
 */
export interface EnvPolicies {
  name: string;
  fixed?(setup: EnvironmentSetup): Policy;
  replacedBy?: readonly string[];
  scripted?(setup: EnvironmentSetup, envSettings: Record<string, unknown>): Policy;
}
