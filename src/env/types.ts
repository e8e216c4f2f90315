import type { Action, Prompt, RolloutTree, Turn, TurnEnv } from '../tree/types.ts';
import type { Rng } from '../util/rng.ts';

/**
 * What a player sees at a turn: the prompt, the text the environment rendered for it, and the turns so
 * far. Declared with the environments (policies depend on environments, not the other way) so one that
 * plays its own episodes (BFCL's evaluation) names what it needs of a player; policy/types.ts's
 * `PolicyContext` is this plus what the rollout engine adds.
 */
export interface PlayerContext {
  prompt: Prompt;
  /** Environment.render(prompt). */
  rendered: string;
  turns: readonly Turn[];
  /** Per-call random stream (sampling seed); greedy decoding ignores it. */
  rng: Rng;
  greedy?: boolean;
  /** Upper bound on generated tokens for this call (from the budget reservation). */
  maxTokens: number;
}

/** What one environment step returns. The state is immutable: `step` returns a new one. */
export interface StepOutcome<S> {
  state: S;
  observation: string;
  done: boolean;
  /** Success in {0,1}, set when done (0 on turn limit). */
  reward?: number;
  /** Raw score behind the reward (e.g. token F1), when done. */
  score?: number;
  /** Why the episode ended ('answer', 'turn_limit'), or which rule an invalid action broke. */
  reason?: string;
  /** True when the action was invalid (it still counts as a turn). */
  invalid?: boolean;
  /** What a server environment reported besides the observation (raw reward, candidate actions); stored on the turn (Turn.env). */
  env?: TurnEnv;
}

/** What the engine passes to an environment's reset and restore. */
export interface EnvCallOptions {
  /** The run's cancellation: a remote environment stops replaying (and closes its session) when it fires. */
  signal?: AbortSignal;
}

/**
 * The environment contract. States are values: `step` never mutates its input, so a
 * continuation can start from any stored prefix. `restore` rebuilds the state after a prefix of
 * recorded turns: in-process environments rebuild it from the recorded observations without calling a
 * tool (synchronously); an environment whose state lives in a server (env/remote) opens a session,
 * resets it with the task and replays the prefix's actions, checking every replayed observation against
 * the recorded one (a mismatch throws ReplayMismatch, env/errors.ts). Such a state belongs to one
 * trajectory: the engine steps it forward only, and calls `release` once when the trajectory ends
 * (however it ends). reset and restore may return a promise; the engine awaits only when they do, so
 * in-process environments keep the engine's call order (and the golden trees) exactly.
 */
export interface Environment<S = unknown> {
  readonly name: string;
  reset(prompt: Prompt, options?: EnvCallOptions): S | Promise<S>;
  step(state: S, action: Action, options?: { signal?: AbortSignal }): Promise<StepOutcome<S>>;
  restore(prompt: Prompt, turns: readonly Turn[], options?: EnvCallOptions): S | Promise<S>;
  /** Frees what a state holds outside the process (a server session); called once per trajectory, last state. */
  release?(state: S): void | Promise<void>;
  /** What restoring this state cost (a server's replay of the prefix); the engine reads it once, right after restore. */
  restoreCost?(state: S): RestoreCost | undefined;
  /**
   * A server environment's load since the last call (what it sent its servers: steps generated and
   * replayed, forks, resets, time, each server's share, failovers); read (and reset) once per step by
   * the step's metrics.
   */
  serverLoad?(): ServerLoad;
  /**
   * The run never restores a prefix (its strategy expands none, e.g. grpo): a server environment then
   * asks its servers to keep no state for forks. Called once, before the first step.
   */
  neverRestores?(): void;
  /**
   * Step metrics the environment reads from the step's finished trees (counts of its own end reasons,
   * e.g. the math env's code_replay_limited); each key must be in src/record/metrics.ts.
   */
  treeMetrics?(trees: readonly RolloutTree[]): Record<string, number>;
  /**
   * 'roots-only': no intermediate prefix can be restored (a server environment that is not
   * replay-deterministic, by the user's `env.branching: roots-only`): the engine offers no prefix to a
   * strategy, so continuation budget becomes extra bare rollouts (the leftover top-up). Absent: prefixes.
   */
  readonly branching?: 'prefixes' | 'roots-only';
  /** The text the policy sees before its first turn (instructions + question). */
  render(prompt: Prompt): string;
  /**
   * Turns a policy's raw text into thought + action (optional; text environments use the Search-R1
   * parser `parseTurn`). An unusable text gives `{ type: 'invalid', input: '<rule>: <message>' }`.
   */
  parse?(text: string): { thought: string; action: Action };
  /** Turn limit of an episode, when the environment has one. */
  readonly maxTurns?: number;
}

/** The cost of one restore by replay: environment steps replayed and the wall milliseconds it took. */
export interface RestoreCost {
  steps: number;
  ms: number;
}

/**
 * What a server environment sent its servers for one step (env/remote), counted when a request is sent
 * so that the servers' own counts of the same period match: sessions reset, environment steps sent for
 * trajectories (generated) and sent again to restore a prefix or a dropped session (replayed), prefixes
 * restored by fork (no step: generated + replayed is the servers' step count, forks are their own
 * figure), the wall milliseconds of its calls, failovers, and each server's share. Read (and reset)
 * once per step by the step's metrics (env_steps …, restore_forks …, details.servers).
 */
export interface ServerLoad {
  /** 'fork' when a server offers fork (replay is then the fallback), else 'replay'. */
  restoreMethod: 'fork' | 'replay';
  resets: number;
  /** Steps sent for trajectories. */
  steps: number;
  /** Steps sent again: prefix replays (fork fallbacks included) and reconnects' replays. */
  replayedSteps: number;
  /** Restores by fork (no environment step replayed). */
  forks: number;
  /** Forks the server refused or answered otherwise than the record, replayed instead. */
  forkFallbacks: number;
  /** Trajectories moved off a server that stopped answering, onto another, by a checked replay. */
  failovers: number;
  /** Wall milliseconds of the resets, steps and forks, summed over concurrent calls. */
  ms: number;
  /** Each server's sessions opened, steps sent (replayed included) and connection failures (one entry per server of the fleet). */
  servers: Array<{ url: string; sessions: number; steps: number; failures: number }>;
}

/** Environments that know the exact success probability at any prefix (the simulator). */
export interface KnowsTruth {
  trueSuccess(prompt: Prompt, turns: readonly Turn[]): number;
}

/** What an action-choosing policy (the embedded one) may pick from at one turn. */
export interface ActionCandidates {
  /** Entity names (or queries) to search. */
  search: readonly string[];
  /** Spans to answer. */
  answer: readonly string[];
  /** Other tool calls (e.g. the math world's code cells), listed after search and answer. */
  tool?: readonly Action[];
}

/**
 * Lists the candidates at a prefix (prompt + turns so far). Must be a pure function of its input so
 * the policy-gradient update can rebuild exactly the choice set each recorded action was drawn from.
 */
export type CandidateSource = (prompt: Prompt, turns: readonly Turn[]) => ActionCandidates;

/**
 * An environment's own features of a candidate action for the embedded policy's linear scorer (names,
 * hashed beside the policy's generic ones): what tells its actions apart where their text looks alike
 * to the generic features (`+3` and `-3` have the same shape and positions). A pure function, as
 * CandidateSource is, so an update rebuilds exactly the features each choice was scored with.
 */
export type ActionFeatures = (prompt: Prompt, turns: readonly Turn[], action: Action) => readonly string[];
