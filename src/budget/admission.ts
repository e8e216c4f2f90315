import type { BudgetUnit } from './units.ts';

/**
 * What of `amount` left in `unit` rollouts can be planned on. In tokens a call is granted only while
 * maxTokensPerTurn tokens are free, so the last maxTokensPerTurn of the budget can never pay for a
 * call: planning on them would start trajectories that the cap then cuts short.
 */
export function spendable(unit: BudgetUnit, amount: number, maxTokensPerTurn: number): number {
  return unit === 'tokens' ? Math.max(0, amount - maxTokensPerTurn) : amount;
}

/**
 * Whether a trajectory may start under a budget in turns or tokens. What the trajectories admitted so
 * far commit is counted: their real cost once finished, their expected cost while running. All of a
 * step's trajectories make their first call early (requests are bounded per call, not per
 * trajectory), so admission must count what the running ones will still spend, not only what the
 * ledger has settled; otherwise the cap cuts trajectories halfway, and a cut one teaches nothing.
 */
export class Admission {
  private committed = 0;
  /** Expected cost of each running trajectory, by its first node id. */
  private readonly running = new Map<string, number>();

  /** `budget`: what the step may spend in its unit (already {@link spendable}). */
  constructor(private readonly budget: number) {}

  /** Admits trajectory `id`, expected to cost `expectedCost`, when the budget not yet committed covers it. */
  admit(id: string, expectedCost: number): boolean {
    if (this.budget - this.committed < expectedCost) return false;
    this.committed += expectedCost;
    this.running.set(id, expectedCost);
    return true;
  }

  /** Trajectory `id` ended: its expectation becomes what it cost (`cost` is read only for an admitted one). */
  settle(id: string, cost: () => number): void {
    const expected = this.running.get(id);
    if (expected === undefined) return;
    this.committed += cost() - expected;
    this.running.delete(id);
  }
}
