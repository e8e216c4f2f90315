import type { BudgetUnit } from '../budget/index.ts';
import type { Rng } from '../util/rng.ts';

/** Outcomes of one prompt's bare rollouts: how many succeeded of how many. */
export interface Outcomes {
  successes: number;
  trials: number;
}

export interface RootCandidate {
  promptId: string;
  /** Predicted success probability Ṽ(prompt) (0.5 / a prior at cold start). */
  v: number;
  /** True success probability, only where the environment knows it (oracle strategy). */
  p?: number;
  /**
   * Fresh outcomes of this prompt under the current policy, drawn outside the budget this step (the
   * oracle's probe where the environment does not know p: train/probe.ts).
   */
  seen?: Outcomes;
  /** Outcomes of this prompt in earlier steps (Knapsack-RL's per-prompt success-rate estimate). */
  history?: Outcomes;
  /**
   * Estimated chance that one bare rollout of this prompt has an intermediate prefix (≥ 2 turns), from
   * earlier steps (trace's expansion-aware root value; absent = 1).
   */
  expandable?: number;
}

/** Input of one root-allocation round. DAPO uses several rounds; the others plan in round 0 only. */
export interface RootRoundInput {
  candidates: readonly RootCandidate[];
  /** Round number, 0 first. */
  round: number;
  /** Bare rollouts that the ledger's remaining budget pays for when this round starts (in round 0: the step's cap over the price of one). */
  remaining: number;
  /** Rewards of the bare rollouts of earlier rounds, per prompt id. */
  results: ReadonlyMap<string, readonly number[]>;
  rng: Rng;
}

/**
 * An intermediate prefix (j, t) of one prompt's finished bare rollouts (1 ≤ t < T_j), or, for a planner
 * whose schedule `offersRoot`, the prompt's root (depth 0: a "continuation" from it is a fresh bare rollout).
 */
export interface PrefixCandidate {
  /**
   * What K continuations "from" this candidate mean, so the engine need not infer it from the id:
   * 'prefix' (absent) = K continuations restored from this prefix; 'root' (only from a planner that
   * `offersRoot`; id = the prompt's root id) = K more bare rollouts of the prompt, not expanded.
   */
  kind?: 'prefix' | 'root';
  id: string;
  /** Ṽ(H(i, j, t)). */
  q: number;
  /** Observed terminal reward r_j of the rollout the prefix belongs to. */
  r: number;
  /** t: turns in the prefix. */
  depth: number;
  /** Turns the rollout took after the prefix (T_j − t ≥ 1): the decisions a continuation from here regenerates, as observed once. */
  after?: number;
  /**
   * Expected cost of one continuation from here in the step's budget unit (absent = 1, the trajectories
   * unit): the cost of the suffix the observed rollout generated after the prefix, in turns or tokens
   * (an unbiased one-sample estimate: a continuation draws a new suffix from the same prefix); for the
   * root (offersRoot), the expected cost of a bare rollout. A positive integer.
   */
  cost?: number;
  /** Policy entropy at the turn that follows the prefix (entropy strategy). */
  entropy?: number;
  /** True success probability at the prefix (oracle strategy). */
  p?: number;
}

export interface PrefixRoundInput {
  promptId: string;
  /** m_i: bare rollouts this prompt received. */
  m: number;
  prefixes: readonly PrefixCandidate[];
  /**
   * What this prompt may spend on continuations in this round, in the step's unit: the planner's
   * `continuationBudget(m)` (m_i · N for trace) times the expected cost of a bare rollout (1 in the
   * trajectories unit). Σ K · cost ≤ budget.
   */
  budget: number;
  /** Expansion round (0: prefixes of the bare rollouts; r > 0: of round r − 1's continuations). */
  round?: number;
  rng: Rng;
}

export interface LeftoverInput {
  candidates: readonly RootCandidate[];
  /** Bare rollouts each prompt has so far (m_i). */
  roots: ReadonlyMap<string, number>;
  /** Bare rollouts that the budget left once every continuation has run pays for (at their expected cost). */
  remaining: number;
  rng: Rng;
}

/** Root counts m_i (prompt id → m ≥ 1); an empty map = no roots. */
export interface RootPlanner {
  plan(input: RootRoundInput): Map<string, number>;
  /**
   * 'until-empty': the engine calls `plan` again with round 1, 2, … until it answers an empty map, each
   * round seeing the rewards of the earlier ones (DAPO's dynamic sampling). Absent: round 0 only.
   */
  readonly rounds?: 'until-empty';
  /**
   * For a planner that draws prompts unevenly on purpose (defensive): each candidate's importance
   * weight 1 / (n · q_i) under its draw distribution q, read once per step with round 0's input. The
   * engine puts a planned prompt's weight on its tree's root and the step scales that tree's
   * advantages by it. Absent: every weight is 1.
   */
  weights?(input: RootRoundInput): ReadonlyMap<string, number>;
}

/**
 * How a strategy's prefixes are expanded, one case per schedule.
 * - 'per-prompt' (TRACE-SPEC §3 step 4): each prompt spends its own continuationBudget(m_i) on its own
 *   prefixes as soon as its bare rollouts finish, over `rounds` rounds (about budget / R each; round
 *   r > 0 plans over the prefixes of round r − 1's continuations, as soon as those finish; what a
 *   round cannot place moves on to the next).
 * - 'step' (trace's `prefixBudget: shared`): once every prompt's bare rollouts have finished, one plan
 *   spends Σ continuationBudget(m_i) over the prefixes of all of them (input.promptId is then '',
 *   input.m = Σ m_i), in one round.
 * `offersRoot` (trace's `rootResample`): in the first round the prompt's root is a candidate too (depth
 * 0, id = the prompt's root id, q = Ṽ(prompt), kind 'root') while its bare outcomes all agree (r = that
 * outcome); K there means K more bare rollouts instead of continuations.
 */
export type ExpansionSchedule =
  { readonly kind: 'per-prompt'; readonly rounds: number; readonly offersRoot: boolean } | { readonly kind: 'step'; readonly offersRoot: boolean };

/** The paper's schedule: one round per prompt, over intermediate prefixes only. */
export const DEFAULT_SCHEDULE: ExpansionSchedule = { kind: 'per-prompt', rounds: 1, offersRoot: false };

/** Where a prompt's continuations go, once its bare rollouts are done (TRACE-SPEC §3 step 4). */
export interface PrefixPlanner {
  /** Continuations a prompt with m bare rollouts may spend (m · N for the tree strategies). */
  continuationBudget(m: number): number;
  /** When and over which prefixes the engine expands (absent: {@link DEFAULT_SCHEDULE}). */
  readonly schedule?: ExpansionSchedule;
  /**
   * Continuations per prefix id (K ≥ 1 only; absent = not expanded); Σ K · cost ≤ input.budget. The engine
   * calls it only for a prompt with at least one prefix candidate and a budget ≥ 1.
   */
  plan(input: PrefixRoundInput): Map<string, number>;
}

/**
 * Extra bare rollouts (prompt id → Δ ≥ 1) for budget left once every continuation has run. Tree
 * strategies use it so unplaceable continuation budget is not silently saved (see parts/leftover.ts).
 */
export interface LeftoverPlanner {
  plan(input: LeftoverInput): Map<string, number>;
}

/**
 * An allocation strategy (TRACE-SPEC §3 and §6), built from parts: roots, and for tree strategies
 * prefixes and a leftover top-up. Pure: predictions, true probabilities and entropies come in as
 * numbers; budget and remaining come in with each input, from the ledger the engine keeps.
 */
export interface Strategy {
  readonly name: string;
  /**
   * Most the strategy may spend in one step, in `unit`: the cap of the engine's ledger. B for every
   * strategy except dapo, whose cap is larger and whose real cost varies.
   */
  readonly cap: number;
  /** The unit of `cap` (absent: trajectories). */
  readonly unit?: BudgetUnit;
  readonly roots: RootPlanner;
  /** Absent: root-only (no prefix expansion). */
  readonly prefixes?: PrefixPlanner;
  /** Absent: budget left after the continuations stays unspent. */
  readonly leftover?: LeftoverPlanner;
  /**
   * What the strategy reads before each step beyond Ṽ, and what it keeps between steps (absent: it plans
   * from the candidates as the loop scores them and keeps nothing). The loop calls it once a step, plans
   * with the strategy it answers, and hands the step's outcome to its `end`.
   */
  readonly perStep?: (start: StepStart) => StepPlan | Promise<StepPlan>;
}

/** One prompt's outcome in a step, as an adaptive strategy reads it. */
export interface PromptOutcome {
  promptId: string;
  /** Its tree holds both a success and a failure. */
  mixed: boolean;
  /** What it spent, in the step's budget unit. */
  cost: number;
}

/** A prompt's bare outcomes in earlier steps, and how many of those rollouts had an intermediate prefix (≥ 2 turns). */
export interface PromptEvidence extends Outcomes {
  /** Absent in runs stored before it was counted. */
  multiTurn?: number;
}

/** What the training loop hands a strategy before each step (Strategy.perStep). */
export interface StepStart {
  /** The step's root candidates: Ṽ, and the true p where the environment knows it. */
  candidates: readonly RootCandidate[];
  /** A prompt's outcomes in earlier steps; undefined before its first bare rollout. */
  evidence(promptId: string): PromptEvidence | undefined;
  /** The run's share of bare rollouts with an intermediate prefix so far, Laplace-smoothed (½ at the start). */
  multiTurnShare: number;
  /** What this strategy's last step kept (the `memory` its plan's `end` answered); undefined at the first step. */
  memory?: Readonly<Record<string, unknown>>;
  /**
   * k fresh bare rollouts of every candidate under the current policy, outside the budget and never
   * trained on (a measuring instrument): each prompt's outcomes (failed rollouts are no evidence) and the
   * tokens they generated.
   */
  freshOutcomes(samples: number): Promise<{ outcomes: ReadonlyMap<string, Outcomes>; tokens: number }>;
  /**
   * The run's environment and policy, for a strategy outside the pure core (an experiment's) that reads
   * them; typed unknown so allocation never depends on them: narrow with a type guard before use.
   */
  run: { env: unknown; policy: unknown };
}

/** A strategy's plan for one step (Strategy.perStep's answer). */
export interface StepPlan {
  /** The strategy to plan this step with (its own parts, or this step's adaptation of them). */
  strategy: Strategy;
  /** The candidates it plans over, with what it read into them (history, expandable, seen, …). */
  candidates: readonly RootCandidate[];
  /** What reading the inputs cost outside the budget, as step metrics (e.g. probe_tokens). */
  metrics?: Record<string, number>;
  /**
   * Reads the step's outcome: what to keep for the next step (plain JSON, stored in the run state under
   * its own keys, so a resumed run restores it) and the step's metrics about the strategy itself.
   */
  end?(outcomes: readonly PromptOutcome[]): { memory: Record<string, unknown>; metrics: Record<string, number> };
}

/**
 * How a strategy's roots spend a budget B in trajectories, as its registry entry answers it (the
 * configuration's budget check reads this instead of knowing strategies by name). Tree strategies
 * (with `continuations` N) plan M = ⌊B / (1 + N)⌋ roots, the others M = B:
 *  - 'solver': the exact root solver gives each selected prompt m_i ∈ [m_min, m_max], so it needs
 *    m_min ≤ M ≤ pool · m_max;
 *  - 'uniform': uniform groups of at least 2 over the batch, so M ≥ 2;
 *  - 'groups': DAPO's rounds of groups of G until its cap, so B ≥ G.
 */
export type RootBudget =
  { kind: 'solver'; continuations?: number; min: number; max: number } | { kind: 'uniform'; continuations?: number } | { kind: 'groups'; size: number };
