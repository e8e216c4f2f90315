import type { ExpansionSchedule, PrefixPlanner, RootCandidate } from '../../allocate/types.ts';
import type { Spend } from '../../budget/index.ts';
import type { Environment, ServerLoad } from '../../env/types.ts';
import type { Policy } from '../../policy/types.ts';
import type { Prompt, RolloutTree, TurnError } from '../../tree/index.ts';
import type { Scorer } from '../candidates.ts';
import type { Progress } from '../events.ts';
import type { StepResult } from '../step-options.ts';
import type { EngineSettings } from '../settings.ts';
import type { ActionParser } from '../trajectory.ts';

/**
 * What a worker process builds once, from the arguments the coordinator names (StepPartsSpec.args),
 * to run its share of a step: the same environment, policy, scorer and prefix planner as the
 * coordinator's, rebuilt in the worker (weights travel as checkpoint bytes inside `args`).
 */
export interface StepParts {
  env: Environment<unknown>;
  policy: Policy;
  /** Ṽ over histories; absent: 0.5 everywhere (as in the engine). */
  scorer?: Scorer;
  /** The strategy's prefix planner; required when the coordinator's strategy expands prefixes. */
  prefixes?: PrefixPlanner;
  parseAction?: ActionParser;
  /**
   * Loads what changes between steps (a training run's new policy and predictor weights) without
   * rebuilding the rest, so one pool of workers serves every step of a run; absent: the parts never change.
   */
  update?(args: unknown): void | Promise<void>;
}

/**
 * Where the workers get their parts: an ES module (a file URL) whose export `buildStepParts(args)`
 * answers StepParts, and its arguments (structured-cloneable: plain data, Maps, typed arrays).
 */
export interface StepPartsSpec {
  module: string;
  args: unknown;
}

export type BuildStepParts = (args: unknown) => StepParts | Promise<StepParts>;

/** The coordinator's first message to a worker. */
export interface BuildMessage {
  kind: 'build';
  worker: number;
  parts: StepPartsSpec;
}

/** One worker's share of a step: its prompts and their root counts, planned by the coordinator. */
export interface TaskMessage {
  kind: 'run';
  prompts: Prompt[];
  /** Prompt id → m (> 0), in the coordinator's plan order. */
  plan: Array<[string, number]>;
  candidates: RootCandidate[];
  weights?: Array<[string, number]>;
  /** The step generator's seed: every stream the engine forks (per trajectory, per prefix plan) is the same as in process. */
  seed: number;
  settings: EngineSettings;
  greedy?: boolean;
  /**
   * Present when the coordinator's strategy expands prefixes: each planned prompt's continuation
   * budget and the schedule, as the coordinator's planner answers them (the worker's own planner must
   * agree: a worker built from other settings would grow other trees).
   */
  expansion?: { budgets: Array<[string, number]>; schedule: ExpansionSchedule };
  /**
   * A budget in turns or tokens: the share's own cap in that unit (its trajectories at the step's
   * planned price, scaled down when the step has less left) and that price; the worker admits its
   * trajectories against its cap as the engine admits a step's against the step's.
   */
  priced?: { unit: 'turns' | 'tokens'; root: number; cap: number };
}

/** Before a step: what changed since the last (UpdateMessage.args goes to StepParts.update). */
export interface UpdateMessage {
  kind: 'update';
  args: unknown;
}

export type CoordinatorMessage = BuildMessage | TaskMessage | UpdateMessage;

export interface ReadyMessage {
  kind: 'ready';
}

/** A finished share: its trees (every prompt of the task) and what they cost, with the worker's own clock. */
export interface ResultMessage {
  kind: 'result';
  trees: RolloutTree[];
  spend: Spend;
  progress: Progress;
  failures: Partial<Record<TurnError['code'], number>>;
  replayMismatches: StepResult['replayMismatches'];
  replayCost: StepResult['replayCost'];
  /** What the worker's own environment sent its servers for this task (Environment.serverLoad); absent for an in-process one. */
  serverLoad?: ServerLoad;
  /** The worker's CPU microseconds (user + system) and wall milliseconds for this task. */
  cpuUs: number;
  wallMs: number;
  /** The worker process's peak resident memory so far, MiB. */
  peakRssMB: number;
}

/** While a task runs, at most every PROGRESS_EVERY_MS: the share's counts so far (the result carries the final ones). */
export interface ProgressMessage {
  kind: 'progress';
  progress: Progress;
}

/** How often a worker reports its progress (a frame each; the coordinator sums them for the progress bar). */
export const PROGRESS_EVERY_MS = 250;

export interface FailedMessage {
  kind: 'failed';
  message: string;
}

export type WorkerMessage = ReadyMessage | ProgressMessage | ResultMessage | FailedMessage;

/**
 * The largest message either side accepts by default. A worker's trees are its whole share of the step:
 * 4,096 trajectories of 5 turns with 500 token ids, log-probs and masks each come to about 250 MB in V8's
 * serialization, so the default leaves room for that and refuses what would only be a runaway.
 */
export const DEFAULT_MAX_MESSAGE_BYTES = 1 << 30;

/** Which stdio slot carries the worker's messages to the coordinator (its stdin carries the other way). */
export const RESULT_FD = 3;
