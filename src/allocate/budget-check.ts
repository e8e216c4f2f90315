import type { StrategyConfig } from './options.ts';
import { treeRootCount } from './parts/roots.ts';
import { rootBudgetOf } from './registry.ts';

/**
 * Why a strategy could not spend its budget B every step on a pool of `pool` prompts, or undefined
 * when it can. Caught when the configuration is read, because otherwise the run would silently spend
 * less (0 trajectories below m_min; fewer than B when pool × m_max cannot hold the roots), and a
 * comparison would compare unequal budgets. What the roots need comes from the strategy's registry
 * entry (`RootBudget`):
 *
 *  - every strategy needs enough roots for one group: M ≥ m_min (solver strategies), M ≥ 2 (uniform
 *    groups), B ≥ G (dapo); tree strategies have M = ⌊B / (1 + N)⌋ roots, the others M = B;
 *  - the exact root solver gives a prompt at most m_max roots, so its strategies need M ≤ pool · m_max.
 */
export function budgetProblem(s: StrategyConfig, pool: number): string | undefined {
  // In turns and tokens M follows from the measured cost of a bare rollout, known only while training;
  // the ledger stops the step at B and the leftover spends what the plan could not, whatever M is.
  if (s.unit !== 'trajectories') return undefined;
  const need = rootBudgetOf(s);
  if (need.kind === 'groups')
    return s.budget < need.size ? `budget ${s.budget} is below one ${s.name} group (groupSize ${need.size}): raise the budget or lower groupSize` : undefined;
  const N = need.continuations;
  // An invalid N is the schema's error on its own field; a budget derived from it would only add noise.
  if (N !== undefined && !(N >= 0)) return undefined;
  const M = N === undefined ? s.budget : treeRootCount(s.budget, N);
  const roots = N === undefined ? `${M} roots` : `M = ⌊B / (1 + N)⌋ = ⌊${s.budget} / ${1 + N}⌋ = ${M} roots`;
  const least = need.kind === 'solver' ? need.min : 2;
  if (M < least)
    return `budget ${s.budget} gives ${s.name} ${roots}, below ${need.kind === 'solver' ? `m_min = ${least}` : 'one group of 2'}: nothing would be rolled out; raise the budget to at least ${least * (1 + (N ?? 0))}`;
  if (need.kind === 'solver' && M > pool * need.max) {
    const spend = pool * need.max * (1 + (N ?? 0));
    return `budget ${s.budget} gives ${s.name} ${roots}, more than pool ${pool} × max ${need.max} = ${pool * need.max} can take: it would spend about ${spend} instead of ${s.budget} per step (unequal budgets); raise pool or max, or lower the budget`;
  }
  return undefined;
}
