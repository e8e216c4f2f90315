import type { BudgetUnit } from '../../budget/units.ts';
import type { TrainConfig } from '../../train/config.ts';

/** The step metric that records what a step spent in each budget unit (src/record/metrics.ts). */
const SPENT_METRIC: Record<BudgetUnit, string> = { trajectories: 'cost_trajectories', turns: 'cost_turns', tokens: 'cost_tokens' };

/**
 * How far under its budget a step may end and still count as having spent it: one trajectory's worth
 * in the run's unit. The ledger reserves each call before it runs (a turn, and the turn's most tokens,
 * engine.maxTokensPerTurn), so a step legitimately ends when what is left cannot pay for one more
 * trajectory at its most: 1 trajectory, engine.maxTurns turns, or maxTurns × maxTokensPerTurn tokens.
 * A strategy that leaves more unspent chose to.
 */
export function spendSlack(config: Pick<TrainConfig, 'strategy' | 'engine'>): number {
  const unit = config.strategy.unit as BudgetUnit;
  return unit === 'trajectories' ? 1 : unit === 'turns' ? config.engine.maxTurns : config.engine.maxTurns * config.engine.maxTokensPerTurn;
}

/**
 * Why a run's stored steps do not show the budget it set (undefined when every step spent it): the
 * first step that spent more than one trajectory's worth less ({@link spendSlack}) or more than one unit
 * more than its budget (the ledger lets no step pass its cap, so more is a broken run), and how many
 * other steps did too. This reads what the run stored, not what its strategy says it plans.
 */
export function spendProblem(
  config: Pick<TrainConfig, 'strategy' | 'engine'>,
  steps: ReadonlyArray<{ step: number; metrics: Record<string, number> }>,
): string | undefined {
  const unit = config.strategy.unit as BudgetUnit;
  const budget = config.strategy.budget;
  const slack = spendSlack(config);
  const off = steps.filter(({ metrics }) => {
    const spent = metrics[SPENT_METRIC[unit]];
    return spent === undefined || !Number.isFinite(spent) || spent < budget - slack || spent > budget + 1;
  });
  if (off.length === 0) return undefined;
  const first = off[0]!;
  const spent = first.metrics[SPENT_METRIC[unit]];
  const what =
    spent === undefined || !Number.isFinite(spent)
      ? `stored no ${unit} spent at step ${first.step}`
      : `spent ${spent} ${unit} at step ${first.step} against its budget of ${budget} (${spent < budget ? `${budget - spent} under; at most ${slack} may be left` : `${spent - budget} over`})`;
  return `${what}${off.length > 1 ? `, and ${off.length - 1} more step(s) were off too` : ''}`;
}
