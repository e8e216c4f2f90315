import type { LeftoverPlanner, RootCandidate } from '../allocate/types.ts';
import { root, type RolloutTree } from '../tree/index.ts';
import type { Rng } from '../util/rng.ts';
import { checkCounts, type CountsRule } from './plan-check.ts';
import type { StepBudget } from './step-budget.ts';

/** What phase 4 plans with; the engine runs the extra bare rollouts it plans (`run`). */
export interface TopUp {
  planner: LeftoverPlanner;
  budget: StepBudget;
  trees: ReadonlyMap<string, RolloutTree>;
  candidates: readonly RootCandidate[];
  rng: Rng;
  signal: AbortSignal;
  /** The ids a plan may name: the step's prompts. */
  prompts: CountsRule;
  /** Runs Δ more bare rollouts per prompt of `plan` (`total` of them), each expected to cost `price`. */
  run(plan: Map<string, number>, total: number, price: number): Promise<void>;
}

/** Leftover rounds at most in turns and tokens (each spends what the previous one's prices left over). */
const LEFTOVER_ROUNDS = 4;

/**
 * Phase 4: budget the strategy could not place as continuations becomes extra bare rollouts
 * (strategy.leftover). They are not expanded; they run after all continuations, so the leftover is
 * known exactly.
 */
export async function leftoverTopUp(t: TopUp): Promise<void> {
  // In turns and tokens the real costs differ from the expected ones: top up again with what is still
  // left, at this step's observed bare-rollout cost, until no further bare rollout is expected to fit.
  // The rounds are capped: a price far below the truth cannot loop for long.
  const rounds = t.budget.price ? LEFTOVER_ROUNDS : 1;
  for (let r = 0; r < rounds; r++) if (!(await leftoverRound(t))) return;
}

/** One leftover round; false when it planned nothing. */
async function leftoverRound(t: TopUp): Promise<boolean> {
  const price = t.budget.barePrice([...t.trees.values()]);
  const remaining = t.budget.remaining(price);
  if (t.signal.aborted || !(remaining > 0) || !Number.isFinite(remaining)) return false;
  const roots = new Map([...t.trees].map(([id, tree]) => [id, root(tree).children.filter((c) => tree.nodes[c].origin === 'bare').length]));
  const plan = t.planner.plan({ candidates: t.candidates, roots, remaining, rng: t.rng.fork('leftover') });
  const total = checkCounts(plan, 'leftover.plan', 'Δ', { ...t.prompts, limit: remaining, what: 'trajectories' });
  if (total === 0) return false;
  await t.run(plan, total, price);
  return true;
}
