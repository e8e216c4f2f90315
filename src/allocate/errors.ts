/** Named errors of the allocation module (misuse and impossible budgets). */

/** Bad solver or strategy input: says which field, what was wrong, and how to fix it. */
export class AllocationInputError extends Error {
  override name = 'AllocationInputError';
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
  }
}

/**
 * The budget cannot be spent exactly within the bounds: Σ m_i = M has no solution with every
 * m_i ∈ {0} ∪ [m_min, m_max] (e.g. M = 1 with m_min = 2, or M > n · m_max). `below`/`above` are the
 * nearest budgets that can be spent (null when none exists on that side).
 */
export class InfeasibleBudgetError extends Error {
  override name = 'InfeasibleBudgetError';
  constructor(
    readonly field: string,
    readonly budget: number,
    readonly below: number | null,
    readonly above: number | null,
    detail: string,
  ) {
    const near = [below, above].filter((x) => x !== null).join(' or ');
    super(`${field}: ${budget} cannot be spent exactly: ${detail}${near ? `; nearest budgets that can: ${near}` : ''}`);
  }
}

/** A strategy needs an input the caller did not supply (true p for oracle, entropies for entropy…). */
export class MissingInputError extends Error {
  override name = 'MissingInputError';
}
