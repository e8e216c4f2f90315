import type { OptionsOf } from '../options.ts';
import type { RootPlanner, Strategy } from '../types.ts';

/** A group is mixed when its rewards are not all equal (at least one success and one failure). */
export function isMixedGroup(rewards: readonly number[]): boolean {
  return rewards.some((r) => r !== rewards[0]);
}

/**
 * DAPO dynamic sampling: each round samples the next `dapoRoundPrompts` unused prompts of the pool at
 * group size G; groups whose outcomes are all equal are filtered out later (by the trainer); rounds
 * continue until `batchSize` mixed groups are collected, the pool is used up, or the next round would
 * pass the trajectory cap (default 4 · B; the ledger's remaining says how much is left). Its real cost
 * varies per step and is what the ledger records.
 */
export function dapoStrategy(o: OptionsOf<'dapo'>): Strategy {
  const G = o.groupSize;
  const target = o.batchSize ?? Math.max(1, Math.floor(o.budget / G));
  const perRound = o.dapoRoundPrompts ?? target;
  const roots: RootPlanner = {
    rounds: 'until-empty',
    plan({ candidates, results, remaining }) {
      let mixed = 0;
      for (const rewards of results.values()) if (isMixedGroup(rewards)) mixed++;
      const plan = new Map<string, number>();
      if (mixed >= target) return plan;
      const k = Math.min(perRound, Math.floor(remaining / G));
      for (const c of candidates) {
        if (plan.size >= k) break;
        if (!results.has(c.promptId)) plan.set(c.promptId, G);
      }
      return plan;
    },
  };
  return { name: 'dapo', cap: o.dapoMaxTrajectories ?? 4 * o.budget, roots };
}
