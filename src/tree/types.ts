/**
 * The rollout-tree data model (TRACE-SPEC §2). A prompt is the root; every ReAct turn is a node; a
 * leaf ends a trajectory and carries its reward. Node ids are content-independent paths
 * (`promptId`, `promptId/0`, `promptId/0/2`, …) so trees can be stored, resumed and compared.
 */

/**
 * A question (prompt) an agent works on. `answers` holds the gold answer(s); `meta` carries whatever
 * the environment needs (gold search path, hop count, dataset name, per-question paragraphs…).
 * It lives with the tree data (below both policies and environments): both read it, neither owns it.
 */
export interface Prompt {
  id: string;
  question: string;
  answers: string[];
  meta?: Record<string, unknown>;
}

/** What the agent did in one turn. `type` is 'search', 'answer', a tool name, or 'invalid'. */
export interface Action {
  type: string;
  input: string;
}

/**
 * Token-level record of one model turn, kept exactly as the policy produced it (never re-tokenised).
 * `ids` are the model's tokens (observation ids are added at export from the run's tokenizer);
 * `mask[i]` is 1 for a token the model sampled (trained on) and 0 for an id appended without being
 * sampled; `logprobs[i]` is the sampling log-probability of a sampled token and 0 elsewhere.
 */
export interface TokenSpan {
  ids: number[];
  logprobs: number[];
  /** 1 = sampled by the model; 0 = appended without being sampled (e.g. a stop tag the server cut). */
  mask: number[];
  /** How the call's prompt reached the server: 'ids' (token-exact, earlier turns never re-tokenised) or 'text'. */
  prompt?: 'ids' | 'text';
  /** The engine's id of the sampled sequence (Tinker's `sequence_id`), which a training Datum's provenance names. */
  sequenceId?: string;
}

/** Why a turn or trajectory failed; failures are data stored on the node, not exceptions. */
export interface TurnError {
  code: 'timeout' | 'server_error' | 'parse_error' | 'context_overflow' | 'tool_error' | 'budget' | 'cancelled';
  message: string;
}

/** One ReAct step: thought, action, and the environment's observation. */
export interface Turn {
  thought: string;
  action: Action;
  observation: string;
  /** The raw model text of the turn, when the policy writes text. */
  text?: string;
  tokens?: TokenSpan;
  /** Number of tokens the policy generated for this turn (for the budget); defaults to tokens.mask sum or 1. */
  generatedTokens?: number;
  /** Policy entropy at this turn's decision (nats), when the policy reports it. */
  entropy?: number;
  /** Log-probability of the whole action under the behaviour policy, when the policy reports it. */
  logprob?: number;
  error?: TurnError;
  /**
   * What an environment served over the wire reported at this turn besides the observation (env/remote):
   * its raw reward for the step, which a replay of the prefix is checked against, and the candidate
   * actions it listed for the next turn, kept so the embedded policy's choice set stays a pure function
   * of (prompt, turns). Absent for in-process environments.
   */
  env?: TurnEnv;
}

/** Candidate actions an environment listed at a state: entity names to search, spans to answer, other actions. */
export interface TurnCandidates {
  search: string[];
  answer: string[];
  tool?: Action[];
}

/** See Turn.env. */
export interface TurnEnv {
  reward?: number;
  candidates?: TurnCandidates;
}

/** Which kind of trajectory created a node. */
export type Origin = 'root' | 'bare' | 'continuation';

/**
 * Why a trajectory stopped. 'context': its next turn's prompt no longer fit the model's context; it
 * ends at its last turn that fit, with reward 0 (a failure that is kept and marked, like turn_limit).
 */
export type EndReason = 'answer' | 'turn_limit' | 'context' | 'error' | 'cancelled';

export interface TreeNode {
  id: string;
  parent: string | null;
  /** Turns from the root (root = 0). */
  depth: number;
  /** Undefined only at the root. */
  turn?: Turn;
  /** Child ids in slot order. */
  children: string[];
  origin: Origin;
  /** Set when the node ends a trajectory. */
  end?: EndReason;
  /** Success in {0,1} for a finished leaf; absent for inner nodes and failed trajectories. */
  reward?: number;
  /** The raw continuous score behind the reward (e.g. token F1), when there is one. */
  score?: number;
  /** Ṽ(H(node)) used when this node was considered for allocation. */
  predicted?: number;
  /** Continuations allocated from this prefix (K), when it was expanded. */
  expanded?: number;
  /**
   * On the root only, from a strategy that draws prompts unevenly (defensive): the importance weight
   * 1 / (n · q) every advantage of this tree is multiplied by, so the step estimates the gradient of
   * the uniform objective over the n candidates. Absent = 1.
   */
  weight?: number;
}

export interface RolloutTree {
  promptId: string;
  prompt: string;
  /** All nodes, root first; insertion order is creation order. */
  nodes: Record<string, TreeNode>;
}
