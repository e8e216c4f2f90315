import type { Caps, Spend } from './ledger.ts';

/**
 * The unit a step's budget B is counted in: trajectories (bare rollouts + continuations,
 * the paper's count), turns (policy calls; each turn makes at most one tool call) or generated tokens
 * (what an inference server bills). A continuation generates only its suffix, so in turns and tokens it
 * costs less than a bare rollout: prefix sharing buys more trajectories at equal spend.
 */
export const BUDGET_UNITS = ['trajectories', 'turns', 'tokens'] as const;
export type BudgetUnit = (typeof BUDGET_UNITS)[number];

/** What `spend` cost in `unit`. */
export function spentIn(spend: Spend, unit: BudgetUnit): number {
  return unit === 'trajectories' ? spend.bare + spend.continuation : unit === 'turns' ? spend.turns : spend.tokens;
}

/** The ledger cap that stops a step at `amount` of `unit`. */
export function capIn(unit: BudgetUnit, amount: number): Caps {
  return { [unit]: amount };
}
