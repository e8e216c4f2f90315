import type { ReplayCost, ReplayMismatches } from './replay-counts.ts';
import type { Strategy, RootCandidate } from '../allocate/types.ts';
import type { Caps, BudgetLedger, Spend } from '../budget/index.ts';
import type { Environment, ServerLoad } from '../env/types.ts';
import type { Policy } from '../policy/types.ts';
import type { Prompt, RolloutTree, TurnError } from '../tree/index.ts';
import type { Rng } from '../util/rng.ts';
import type { EngineEvent, Progress } from './events.ts';
import type { Scorer } from './candidates.ts';
import type { Recording } from './recorder.ts';
import type { RemoteRound } from './remote-round.ts';
import type { EngineSettings, EngineSettingsInput } from './settings.ts';
import type { ActionParser } from './trajectory.ts';

/** Misuse of the engine (unknown or duplicate prompt ids, bad counts in a plan). */
export class EngineError extends Error {
  override name = 'EngineError';
}

/** The allocation side the engine needs: a Strategy's cap and parts (its name is not needed here). */
export type Allocator = Omit<Strategy, 'name'>;

/** What every step takes, whatever decides its roots. */
interface StepBasics<S> {
  prompts: readonly Prompt[];
  env: Environment<S>;
  policy: Policy;
  rng: Rng;
  /** Caps on policy calls and generated tokens for this step (a strategy's cap, in its unit, is added). */
  caps?: Omit<Caps, 'trajectories'>;
  /** Ṽ(H) for roots and prefixes; default 0.5 everywhere (the cold-start predictor). */
  scorer?: Scorer;
  settings?: EngineSettingsInput;
  signal?: AbortSignal;
  onEvent?: (event: EngineEvent) => void;
  /** Reads actions out of text when the policy returns text only (default: the Search-R1 parser). */
  parseAction?: ActionParser;
  /** Greedy decoding (evaluation). */
  greedy?: boolean;
  /**
   * Runs round 0's bare rollouts and prefix expansion elsewhere (worker processes; split/split-step.ts
   * sets it and refuses the options it cannot split). Absent: everything runs in this process.
   */
  remote?: RemoteRound;
}

/** Roots, prefixes and leftover from a strategy; the step's ledger is capped at its `cap`. */
export interface StrategyRoots {
  strategy: Allocator;
  rootPlan?: never;
  /**
   * With a strategy whose unit is turns or tokens: the expected cost of one bare rollout, from earlier
   * steps (default: the stated prior `priorRootCost`). Roots and the leftover are planned at this
   * price, continuations at the cost of the suffix they regenerate. Ignored in the trajectories unit.
   */
  rootCost?: number;
  /** Root candidates for roots.plan; default: every prompt with v = scorer(root), p from the env if it knows truth. */
  candidates?: readonly RootCandidate[];
  /** Milliseconds from the caller's clock, to time the root solve apart from the rollouts (library code reads no clock). */
  clock?: () => number;
}

/** A fixed one-round root plan (prompt id → m): nothing is expanded and the trajectories are not capped. */
export interface FixedRoots {
  rootPlan: ReadonlyMap<string, number>;
  strategy?: never;
}

/** Calls go to the policy and tools (and, with `record`, are kept there), or are answered from `replay`. */
export type StepTape = { record?: Recording; replay?: never } | { replay: Recording; record?: never };

export type StepOptions<S> = StepBasics<S> & (StrategyRoots | FixedRoots) & StepTape;

export interface StepResult {
  /** One tree per prompt that received roots, in the order of `prompts`. */
  trees: RolloutTree[];
  /** The text the policy saw at each tree's root (Environment.render), by prompt id. */
  rendered: ReadonlyMap<string, string>;
  /** What this step spent. */
  spend: Spend;
  /** The root plan of each round (DAPO-like strategies use several). */
  rounds: Array<Map<string, number>>;
  progress: Progress;
  /** Trajectory failures by code (timeouts, server errors, tool errors, budget). */
  failures: Partial<Record<TurnError['code'], number>>;
  cancelled: boolean;
  settings: EngineSettings;
  /** The step's ledger (created here from the caps), for checks after the step. */
  ledger: BudgetLedger;
  /** Milliseconds spent in roots.plan (by `clock`; 0 without one): allocation time inside the step. */
  rootPlanMs: number;
  /**
   * Continuations that did not run because replaying their prefix differed from the record (a
   * nondeterministic environment, env/errors.ts ReplayMismatch), by prompt id, with the first message.
   */
  replayMismatches: ReplayMismatches;
  /**
   * What restoring prefixes by replay cost (an environment served over the wire, env/remote): restores
   * made (mismatched ones included), environment steps replayed and their wall milliseconds. Never part
   * of the budget. All 0 for in-process environments, whose restore calls no tool.
   */
  replayCost: ReplayCost;
  /**
   * What the parts of the step run elsewhere (worker processes, options.remote) sent their servers
   * through their own environments' sessions, summed; this process's own is its environment's
   * serverLoad(). Absent in process and for in-process environments.
   */
  partsLoad?: ServerLoad;
}
