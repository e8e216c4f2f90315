import type { Normalise } from './surrogate.ts';
import type { Action, Prompt, TokenSpan, Turn } from '../tree/types.ts';
import type { PlayerContext } from '../env/types.ts';

/** What the policy sees (the environment's `PlayerContext`), and what the rollout engine adds to a call. */
export interface PolicyContext extends PlayerContext {
  signal?: AbortSignal;
  /**
   * Deterministic id of this call, `<node id>#<attempt>` (set by the rollout engine): the key under
   * which record/replay stores the response, and a stable seed label for servers that take one.
   */
  callId?: string;
  /** Id of the trajectory's first node; routers use it to keep one trajectory on one server. */
  trajectoryId?: string;
}

/** One generated turn, before the environment answers it. */
export interface PolicyOutput {
  /** The model's text for the turn (reasoning + action tag), Search-R1 style. */
  text: string;
  /** Set by policies that choose structured actions; otherwise the engine parses `text`. */
  action?: Action;
  thought?: string;
  /** Generated tokens only (mask all 1); the engine appends observation tokens when it has them. */
  tokens?: TokenSpan;
  generatedTokens: number;
  logprob?: number;
  entropy?: number;
}

/** A prompt's size against the model's context, as a policy that counts its tokens tells it. */
export interface PromptFit {
  /** Tokens the first call on the prompt sends (before any turn). */
  tokens: number;
  /** The most tokens one sequence may hold: the model's context. */
  context: number;
  /** The policy's own cap on one turn's generated tokens, where it has one (the engine's applies too). */
  turnTokens?: number;
}

export interface Policy {
  readonly name: string;
  act(ctx: PolicyContext): Promise<PolicyOutput>;
  /**
   * The prompt's tokens against the model's context, for a policy that can count them (undefined, or
   * no method: it cannot tell, and nothing is refused). Training skips a task whose prompt leaves no
   * room for its first turn before any rollout spends on it (train/prompt-fit.ts).
   */
  promptFit?(prompt: Prompt, rendered: string): Promise<PromptFit | undefined>;
  /**
   * Counts of the samples since the previous call (each call starts a new count), under metric keys of
   * record/metrics.ts: tinker's prompt tokens sent, those in the trees' shared prefixes and the
   * engine's prefix-cache hits. train logs them per step; diagnose prints them.
   */
  engineCounts?(): Record<string, number>;
}

/** One trajectory (or tree path) to learn from: its turns and one advantage per turn (0 = no gradient). */
export interface PolicySample {
  prompt: Prompt;
  turns: readonly Turn[];
  advantages: readonly number[];
}

/**
 * What the training step passes to every update (from `config.policy`). The policy uses exactly these
 * values: it has no step size of its own that could override the step's.
 */
export interface PolicyUpdateOptions {
  /** Adam step size. */
  learningRate: number;
  /** PPO clip ε: the ratio π/π_old is clipped to [1 − ε, 1 + ε]. */
  clip: number;
  /** Passes over the samples. */
  epochs: number;
  /** What the surrogate's sum is divided by (policy/surrogate.ts); absent = the policy's default. */
  normalise?: Normalise;
}

export interface UpdateMetrics {
  /** Turns that contributed a gradient. */
  turns: number;
  /** −(mean clipped surrogate + β·H) over contributing turns (first epoch). */
  loss: number;
  /** Share of turns (or tokens) whose ratio was clipped (first epoch). */
  clipFraction: number;
  /** Mean of (log π_old − log π_new) over turns (or tokens). */
  approxKl: number;
  entropy: number;
}

/** How a run ended, for a policy whose engine keeps a session: finished, failed, or stopped (Ctrl-C, a signal). */
export type RunOutcome = 'success' | 'errored' | 'interrupted';

/**
 * A policy the training loop can improve and checkpoint. Fixed policies (the simulator's, the scripted
 * world walker, a remote server) implement only {@link Policy}.
 */
export interface TrainablePolicy extends Policy {
  update(samples: readonly PolicySample[], options: PolicyUpdateOptions): UpdateMetrics | Promise<UpdateMetrics>;
  /** A self-contained snapshot (weights and optimiser state); `load` of it acts exactly as before. */
  save(): Uint8Array;
  load(snapshot: Uint8Array): void;
  /**
   * Frees what the policy holds outside the JS heap (a tiny LM: llama.cpp and jax-js memory) and ends
   * its engine session (tinker: how the run ended); train() calls it when it ends.
   */
  dispose?(outcome?: RunOutcome): Promise<void>;
}

/**
 * Why a policy call failed; the engine stores it on the node (tree TurnError codes).
 * `context_overflow`: the trajectory no longer fits the model's context (never retried; the engine
 * ends the trajectory at its last turn with end 'context' and reward 0).
 */
export type PolicyFailureCode = 'timeout' | 'server_error' | 'parse_error' | 'context_overflow';
