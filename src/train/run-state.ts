import { emptySpend, type Spend } from '../budget/index.ts';
import { meanBareCost } from '../rollout/index.ts';
import { getNode, rewardedLeaves, root, type RolloutTree } from '../tree/index.ts';

/** What carries over from one step to the next besides the model checkpoints (stored as JSON). */
export interface RunState {
  /**
   * Per-prompt outcomes of earlier bare rollouts: [successes, trials] (Knapsack-RL's estimate), then
   * how many of those rollouts had an intermediate prefix (≥ 2 turns; absent in older runs).
   */
  history: Record<string, [number, number] | [number, number, number]>;
  /** Cost since step 0. */
  cumulative: Spend;
  /**
   * Mean cost of one bare rollout in the last step, in turns and tokens: the price the next step plans
   * its roots at (budgets in turns or tokens only; absent before the first step and in trajectories).
   */
  bareCost?: { turns: number; tokens: number };
  /** The strategy's memory between steps (its plan's `end`), under its own keys: guarded keeps `guard`. */
  [memory: string]: unknown;
}

/** The run state's own keys; every other key is the strategy's memory. */
const CORE_KEYS = new Set(['history', 'cumulative', 'bareCost']);

/** The strategy's memory in a run state (undefined: none kept). */
export function memoryOf(state: RunState): Record<string, unknown> | undefined {
  const memory = Object.fromEntries(Object.entries(state).filter(([k]) => !CORE_KEYS.has(k)));
  return Object.keys(memory).length > 0 ? memory : undefined;
}

export function initialState(): RunState {
  return { history: {}, cumulative: emptySpend() };
}

/** The run's share of bare rollouts with an intermediate prefix so far (Laplace-smoothed: ½ at step 0). */
export function multiTurnShare(history: RunState['history']): number {
  let multi = 0;
  let n = 0;
  for (const h of Object.values(history)) {
    if (h[2] === undefined) continue;
    multi += h[2];
    n += h[1];
  }
  return (multi + 1) / (n + 2);
}

/** The run state after a step: its bare rollouts' outcomes added to the history, its spend to the totals. */
export function nextState(prev: RunState, trees: readonly RolloutTree[], spend: Spend, priced: boolean): RunState {
  const history = { ...prev.history };
  for (const tree of trees) {
    let s = 0;
    let n = 0;
    let multi = 0;
    for (const id of root(tree).children) {
      if (getNode(tree, id).origin !== 'bare') continue;
      for (const leaf of rewardedLeaves(tree, id)) {
        if (leaf.origin !== 'bare') continue;
        s += leaf.reward!;
        n++;
        if (leaf.depth >= 2) multi++;
      }
    }
    if (n === 0) continue;
    const [hs, hn, hm] = history[tree.promptId] ?? [0, 0, 0];
    history[tree.promptId] = [hs + s, hn + n, (hm ?? 0) + multi];
  }
  const c = prev.cumulative;
  const cumulative: Spend = {
    bare: c.bare + spend.bare,
    continuation: c.continuation + spend.continuation,
    turns: c.turns + spend.turns,
    tokens: c.tokens + spend.tokens,
    toolCalls: c.toolCalls + spend.toolCalls,
  };
  if (!priced) return { history, cumulative };
  return { history, cumulative, bareCost: bareCostOf(trees) ?? prev.bareCost };
}

/** Mean turns and tokens of the bare rollouts that finished with a reward; undefined when none did. */
function bareCostOf(trees: readonly RolloutTree[]): { turns: number; tokens: number } | undefined {
  const turns = meanBareCost(trees, 'turns');
  const tokens = meanBareCost(trees, 'tokens');
  return turns !== undefined && tokens !== undefined ? { turns, tokens } : undefined;
}
