import type { StrategyConfig } from './options.ts';

/** Strategies that spend M = ⌊B / (1 + N)⌋ on roots and the rest on continuations. */
const TREE = new Set(['trace', 'oracle', 'random-tree', 'entropy']);

/**
 * Why a strategy could not spend its budget B every step on a pool of `pool` prompts, or undefined
 * when it can. Caught when the configuration is read, because otherwise the run would silently spend
 * less (0 trajectories below m_min; fewer than B when the pool × m_max cannot hold the roots), and a
 * comparison would compare unequal budgets.
 *
 *  - every strategy needs enough roots for one group: M ≥ m_min (solver strategies), M ≥ 2 (uniform
 *    groups), B ≥ G (dapo);
 *  - the exact root solver gives a prompt at most m_max roots, so its strategies need M ≤ pool · m_max.
 */
export function budgetProblem(s: StrategyConfig, pool: number): string | undefined {
  const tree = TREE.has(s.name);
  const M = tree ? Math.floor(s.budget / (1 + s.continuations)) : s.budget;
  const rootsText = tree ? `M = ⌊B / (1 + N)⌋ = ⌊${s.budget} / ${1 + s.continuations}⌋ = ${M} roots` : `${M} roots`;
  if (s.name === 'dapo') return s.budget < s.groupSize ? `budget ${s.budget} is below one dapo group (groupSize ${s.groupSize}): raise the budget or lower groupSize` : undefined;
  const solver = s.name === 'pcl' || s.name === 'knapsack' || ((s.name === 'trace' || s.name === 'oracle') && s.roots !== 'uniform');
  const least = solver ? s.min : 2;
  if (M < least) return `budget ${s.budget} gives ${s.name} ${rootsText}, below ${solver ? `m_min = ${s.min}` : 'one group of 2'}: nothing would be rolled out; raise the budget to at least ${least * (tree ? 1 + s.continuations : 1)}`;
  if (solver && M > pool * s.max) {
    const spend = pool * s.max * (tree ? 1 + s.continuations : 1);
    return `budget ${s.budget} gives ${s.name} ${rootsText}, more than pool ${pool} × max ${s.max} = ${pool * s.max} can take: it would spend about ${spend} instead of ${s.budget} per step (unequal budgets); raise pool or max, or lower the budget`;
  }
  return undefined;
}
