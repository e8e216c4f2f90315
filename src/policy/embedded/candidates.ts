import type { ActionCandidates, CandidateSource } from '../../env/types.ts';
import type { Action } from '../../tree/types.ts';

// The candidates belong to the environments that list them; the embedded policy reads them.
export type { ActionCandidates, CandidateSource };
export { worldCandidateSource } from '../../env/world/index.ts';

/** Candidates flattened to actions: search, answer, then other tools, each in the source's order. */
export function candidateActions(c: ActionCandidates): Action[] {
  return [...c.search.map((input) => ({ type: 'search', input })), ...c.answer.map((input) => ({ type: 'answer', input })), ...(c.tool ?? [])];
}
