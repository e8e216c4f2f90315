import type { RootCandidate, StepPlan, StepStart, Strategy } from '../types.ts';

/**
 * Reading the run's evidence into a step's candidates: what strategies that plan from earlier outcomes
 * (knapsack's p̂, trace's rootPrior and rootValue) use as their `perStep`.
 */

/** How strongly a prompt's own multi-turn count is shrunk towards the run's share (pseudo-rollouts). */
const MULTI_TURN_PRIOR = 2;

/** Each candidate with its earlier outcomes (`history`), where it has any. */
export function withHistory(start: StepStart): RootCandidate[] {
  return start.candidates.map((c) => {
    const e = start.evidence(c.promptId);
    return e ? { ...c, history: { successes: e.successes, trials: e.trials } } : c;
  });
}

/**
 * The chance a bare rollout of a prompt has an intermediate prefix (`expandable`): its own count shrunk
 * towards the run's share, because prompts recur only once per epoch and most have no history of their own.
 */
export function expandableChance(start: StepStart, promptId: string): number {
  const e = start.evidence(promptId);
  if (!e || e.multiTurn === undefined) return start.multiTurnShare;
  return (e.multiTurn + MULTI_TURN_PRIOR * start.multiTurnShare) / (e.trials + MULTI_TURN_PRIOR);
}

/** A strategy that reads its candidates' history (and, with `expandable`, their chance of a prefix) before each step. */
export function readingEvidence(strategy: Omit<Strategy, 'perStep'>, o: { expandable?: boolean } = {}): Strategy {
  const perStep = (start: StepStart): StepPlan => {
    const candidates = withHistory(start);
    return { strategy: self, candidates: o.expandable ? candidates.map((c) => ({ ...c, expandable: expandableChance(start, c.promptId) })) : candidates };
  };
  const self: Strategy = { ...strategy, perStep };
  return self;
}
