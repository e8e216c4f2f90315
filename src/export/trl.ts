import type { LeafRow } from './rows.ts';

/**
 * A row for TRL's GRPO trainer: the names of the batch dict its trainer builds before the loss
 * (prompt_ids, completion_ids, completion_mask, old_per_token_logps, advantages). `completion_mask`
 * marks real tokens (TRL also uses it for attention); `tool_mask` marks the tokens to train on
 * (0 on tool / observation tokens) and must multiply the loss mask, not the attention mask.
 */
export interface TrlRow {
  step: number;
  prompt_id: string;
  tree_id: string;
  leaf_id: string;
  prompt: string;
  completion: string;
  prompt_ids: number[];
  completion_ids: number[];
  completion_mask: number[];
  tool_mask: number[];
  old_per_token_logps: number[];
  logprobs_known: boolean;
  token_exact: boolean;
  /** One scalar per sequence, as stock GRPO uses (the estimator's leaf value). */
  advantages: number;
  /** Per completion token: the turn's advantage on model tokens, 0 on tool tokens. */
  per_token_advantages: number[];
  reward: number;
  num_turns: number;
}

export function toTrlRow(r: LeafRow): TrlRow {
  return {
    step: r.step,
    prompt_id: r.prompt_id,
    tree_id: r.tree_id,
    leaf_id: r.leaf_id,
    prompt: r.prompt_text,
    completion: r.response_text,
    prompt_ids: r.prompt_ids,
    completion_ids: r.response_ids,
    completion_mask: r.response_ids.map(() => 1),
    tool_mask: r.response_mask,
    old_per_token_logps: r.response_logprobs,
    logprobs_known: r.logprobs_known,
    token_exact: r.token_exact,
    advantages: r.advantage,
    per_token_advantages: r.advantages,
    reward: r.reward,
    num_turns: r.num_turns,
  };
}
