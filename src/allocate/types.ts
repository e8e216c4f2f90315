import type { Rng } from '../util/rng.ts';

/** A prompt in the candidate pool, as the root phase sees it. */
export interface RootCandidate {
  promptId: string;
  /** Predicted success probability Ṽ(prompt) (0.5 / a prior at cold start). */
  v: number;
  /** True success probability, only where the environment knows it (oracle strategy). */
  p?: number;
  /** Outcomes of this prompt in earlier steps (Knapsack-RL's per-prompt success-rate estimate). */
  history?: { successes: number; trials: number };
  /**
   * Estimated chance that one bare rollout of this prompt has an intermediate prefix (≥ 2 turns), from
   * earlier steps (trace's expansion-aware root value; absent = 1).
   */
  expandable?: number;
}

/** Input of one root-allocation round. DAPO uses several rounds; the others answer in round 0 only. */
export interface RootRoundInput {
  candidates: readonly RootCandidate[];
  /** Round number, 0 first. */
  round: number;
  /** Trajectories left in the step's budget when this round starts. */
  remaining: number;
  /** Rewards of the bare rollouts of earlier rounds, per prompt id. */
  results: ReadonlyMap<string, readonly number[]>;
  rng: Rng;
}

/** An intermediate prefix (j, t) of one prompt's finished bare rollouts (1 ≤ t < T_j). */
export interface PrefixCandidate {
  id: string;
  /** Ṽ(H(i, j, t)). */
  q: number;
  /** Observed terminal reward r_j of the rollout the prefix belongs to. */
  r: number;
  /** t: turns in the prefix. */
  depth: number;
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
  /** Continuations this prompt may spend (m_i · N for trace-like strategies). */
  budget: number;
  rng: Rng;
}

export interface LeftoverInput {
  candidates: readonly RootCandidate[];
  /** Bare rollouts each prompt has so far (m_i). */
  roots: ReadonlyMap<string, number>;
  /** Trajectories left in the step's budget. */
  remaining: number;
  rng: Rng;
}

/**
 * An allocation strategy (TRACE-SPEC §3 and §6). Pure: predictions, true probabilities and entropies
 * come in as numbers. `planRoots` is called with round 0, 1, … until it returns an empty map; the
 * engine then gives each prompt's finished bare rollouts to `planPrefixes`.
 */
export interface Strategy {
  readonly name: string;
  /**
   * Most trajectories (bare + continuations) this strategy can spend in one step. Set the step's
   * ledger cap to it. Every strategy except dapo spends at most its budget B; dapo's cap is larger
   * and its real cost varies (absent = no promise).
   */
  readonly trajectoryCap?: number;
  /** Root counts m_i for this round (prompt id → m ≥ 1); empty = no more roots this step. */
  planRoots(input: RootRoundInput): Map<string, number>;
  /** Continuation budget this prompt gets once its m bare rollouts are done (0 for root-only strategies). */
  prefixBudget(m: number): number;
  /** Continuations per prefix id (K ≥ 1 only; absent = not expanded). */
  planPrefixes(input: PrefixRoundInput): Map<string, number>;
  /**
   * Extra bare rollouts (prompt id → Δ ≥ 1) for budget left once every expansion is planned; called
   * once, after all continuations finish. Tree strategies use it so unplaceable continuation budget
   * is not silently saved (see leftover.ts); absent = leave it unspent.
   */
  planLeftover?(input: LeftoverInput): Map<string, number>;
}
