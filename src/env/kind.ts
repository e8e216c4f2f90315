/**
 * What an environment kind is: everything specific to it, declared by its own folder, so that shared
 * code (the configuration, `trace-rl eval`, training's held-out evaluation, `compare`) asks the entry
 * and never switches on a kind's name. The entries are gathered in the family of registry.ts.
 */
import { z } from 'zod';
import type { Prompt } from '../tree/types.ts';
import type { TrajectoryMetrics } from './metrics.ts';
import type { ActionFeatures, CandidateSource, Environment } from './types.ts';

/** What a built environment gives training, the rollout service and evaluation. */
export interface EnvironmentSetup {
  env: Environment<unknown>;
  train: Prompt[];
  test: Prompt[];
  /** Held-out prompts by dataset name (one entry, named after the kind, for generated environments). */
  heldOut: Map<string, Prompt[]>;
  /** Candidate actions for the embedded policy; absent when only a policy that writes text can act. */
  candidates?: CandidateSource;
  /** The kind's own features of those candidates for the embedded policy (see ActionFeatures). */
  features?: ActionFeatures;
  /**
   * Tasks set aside while building (a server environment's tasks refused at their first observation),
   * counted among the configured ones: `of` tasks in all (training and held-out), `refused` skipped.
   */
  skipped?: { refused: number; of: number };
}

/** What building an environment needs besides its own settings: the run's turn limit. */
export interface EnvBuildContext {
  maxTurns: number;
  /**
   * The prompts an earlier build of the same settings made (a rollout worker process rebuilding the
   * coordinator's environment, for a kind with `forWorkers`): taken as they are instead of asking a
   * server for every task's first observation again.
   */
  prompts?: { train: readonly Prompt[]; test: readonly Prompt[] };
}

export interface EnvKind<K extends string = string, S extends { kind: K } = { kind: K }> {
  name: K;
  /** Strict: a field this kind does not take is an error. Its `kind` is `z.literal(name)`. */
  schema: z.ZodType<S, { kind: K }>;
  /**
   * May be asynchronous: a server environment fetches every task's first observation (its prompt) here.
   * The built-in kinds import their environment's code here, not beside the schema: every command that
   * parses a configuration (`trace-rl config` among them) loads every kind's entry, and needs none of
   * the environments (BFCL's APIs, the math grader's compute engine, the remote sessions).
   */
  build(settings: S, context: EnvBuildContext): EnvironmentSetup | Promise<EnvironmentSetup>;
  /**
   * Generated kinds make as many questions as asked: the settings with at least `n` held-out ones
   * (`trace-rl eval --questions n`). Absent for kinds that read their questions from files.
   */
  withHeldOut?(settings: S, n: number): S;
  /** What evaluation measures per trajectory (default: the environment's own success reward, `accuracy`). */
  metrics?: TrajectoryMetrics;
  /**
   * Training's held-out evaluation takes the first questions of each dataset (`prompt.meta.dataset`),
   * one random stream per question, and logs `eval_<metric>/<dataset>` for every metric but accuracy.
   * Without it: the first held-out questions, on the step's one stream, test_accuracy only.
   */
  heldOutByDataset?: true;
  /**
   * Where `trace-rl eval --datasets` goes in the settings (a dotted path inside `env`), and whether
   * the kind evaluates one dataset only (then `example` names one). Absent: the kind makes its own questions.
   */
  datasetsSetting?: { path: string; single?: { example: string } };
  /**
   * `trace-rl compare`'s budget in generated tokens when the command gives none: grpo's measured mean
   * spend at 192 trajectories a step here, so that strategies compare at equal cost.
   * Absent where nothing was measured (compare keeps train's default).
   */
  equalTokenBudget?(settings: S): number;
  /**
   * The settings each of `workers` rollout worker processes (engine.workers > 1) builds this kind with,
   * for a kind whose environment holds what the workers must share (a server's sessions: each worker
   * opens its own); or why it cannot be shared that way, in words for the configuration's error. Its
   * workers are built with the coordinator's prompts (EnvBuildContext.prompts). Absent: each worker
   * builds the settings as they are.
   */
  forWorkers?(settings: S, workers: number): S | string;
  /** Why a language model (policy.kind tiny-lm) is not for this kind, when it is not; the error says it. */
  notForLanguageModels?: string;
}

/** A kind's settings: strict, so a field of another kind fails under its own path. */
export function kindObject<K extends string, S extends z.ZodRawShape>(kind: K, shape: S) {
  return z.strictObject({ kind: z.literal(kind), ...shape });
}

/** Defines a kind with its settings' types read from its schema. */
export function envKind<K extends string, T extends z.ZodType<{ kind: K }, { kind: K }>>(
  name: K,
  schema: T,
  rest: Omit<EnvKind<K, z.output<T>>, 'name' | 'schema'>,
): EnvKind<K, z.output<T>> {
  return { name, schema: schema as unknown as z.ZodType<z.output<T>, { kind: K }>, ...rest };
}
