import type { Prompt } from '../env/types.ts';
import type { Action, TokenSpan, Turn } from '../tree/types.ts';
import type { Rng } from '../util/rng.ts';

/** What the policy sees: the prompt, the text the environment rendered for it, and the turns so far. */
export interface PolicyContext {
  prompt: Prompt;
  /** Environment.render(prompt). */
  rendered: string;
  turns: readonly Turn[];
  /** Per-call random stream (sampling seed); greedy decoding ignores it. */
  rng: Rng;
  greedy?: boolean;
  /** Upper bound on generated tokens for this call (from the budget reservation). */
  maxTokens: number;
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

export interface Policy {
  readonly name: string;
  act(ctx: PolicyContext): Promise<PolicyOutput>;
}

/** Why a policy call failed; the engine stores it on the node (tree TurnError codes). */
export type PolicyFailureCode = 'timeout' | 'server_error' | 'parse_error';

