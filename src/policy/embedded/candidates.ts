import type { Action, Prompt, Turn } from '../../tree/types.ts';

/** What an action-choosing policy may pick from at one turn. */
export interface ActionCandidates {
  /** Entity names (or queries) to search. */
  search: readonly string[];
  /** Spans to answer. */
  answer: readonly string[];
}

/**
 * Lists the candidates at a prefix (prompt + turns so far). Must be a pure function of its input so
 * the policy-gradient update can rebuild exactly the choice set each recorded action was drawn from.
 */
export type CandidateSource = (prompt: Prompt, turns: readonly Turn[]) => ActionCandidates;

/** Candidates flattened to actions, search first, in the source's order. */
export function candidateActions(c: ActionCandidates): Action[] {
  return [...c.search.map((input) => ({ type: 'search', input })), ...c.answer.map((input) => ({ type: 'answer', input }))];
}

/** The world's own candidate extraction (src/env `candidatesFrom`) through its environment. */
export function worldCandidateSource(env: { restore(prompt: Prompt, turns: readonly Turn[]): unknown; candidates(state: never): ActionCandidates }): CandidateSource {
  return (prompt, turns) => env.candidates(env.restore(prompt, turns) as never);
}
