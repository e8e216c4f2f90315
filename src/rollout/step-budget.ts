import { Admission, BudgetLedger, capIn, spendable, type BudgetUnit, type Caps } from '../budget/index.ts';
import type { RootCandidate } from '../allocate/types.ts';
import type { RolloutTree } from '../tree/index.ts';
import type { Rng } from '../util/rng.ts';
import { meanBareCost, ownTurns, priorRootCost, suffixCost, type Price } from './candidates.ts';
import { EngineError, type Allocator } from './step-options.ts';
import type { EngineSettings } from './settings.ts';
import { UserError } from '../util/user-error.ts';

/**
 * A step whose budget cannot pay for one trajectory: it would run nothing and train on nothing while
 * looking finished, so the step refuses before it starts, naming the budget and the smallest that
 * admits one trajectory.
 */
export class BudgetTooSmall extends UserError {
  override name = 'BudgetTooSmall';
  constructor(
    readonly budget: number,
    readonly unit: BudgetUnit,
    readonly smallest: number,
    why: string,
  ) {
    super(
      `a budget of ${budget} ${unit} admits no trajectory (${why})` +
        (Number.isFinite(smallest) ? `; the smallest budget that admits one is ${smallest} ${unit}` : '; no budget up to a few thousand trajectories does'),
    );
  }
}

/**
 * A step's budget as the engine plans with it: the ledger (capped at the strategy's cap in its unit,
 * plus the caller's caps), what a trajectory costs in turns or tokens, and the admission of priced
 * trajectories. In trajectories every trajectory costs 1 and nothing needs admitting.
 */
export class StepBudget {
  readonly ledger: BudgetLedger;
  readonly unit: BudgetUnit;
  /** Undefined in the trajectories unit. */
  readonly price?: Price;
  readonly admission?: Admission;

  constructor(
    strategy: Allocator | undefined,
    caps: Omit<Caps, 'trajectories'> | undefined,
    rootCost: number | undefined,
    private readonly settings: EngineSettings,
  ) {
    this.unit = strategy?.unit ?? 'trajectories';
    this.ledger = new BudgetLedger({ ...caps, ...(strategy ? capIn(this.unit, strategy.cap) : {}) });
    if (this.unit === 'trajectories' || !strategy) return;
    const root = rootCost ?? priorRootCost(this.unit, settings);
    if (!(root > 0) || !Number.isFinite(root)) throw new EngineError(`rootCost must be a positive number, got ${root}`);
    this.price = { unit: this.unit, root: Math.max(1, Math.round(root)) };
    this.admission = new Admission(this.spendable(strategy.cap));
  }

  /** What of `amount` left in the step's unit rollouts can be planned on (budget/admission.ts). */
  spendable(amount: number): number {
    return spendable(this.unit, amount, this.settings.maxTokensPerTurn);
  }

  /** Trajectories at `price` each that what is left in the ledger pays for. */
  remaining(price: number): number {
    return Math.floor(this.spendable(this.ledger.remaining(this.unit)) / price);
  }

  /**
   * What a bare rollout costs in the step's unit: 1 in trajectories; in turns and tokens the mean cost
   * of the finished bare rollouts of `trees` in this step (a prompt's own when its continuation budget is set,
   * every prompt's for the leftover; all of them have finished by then, so the price does not depend
   * on the order they finished in), else the planned price.
   */
  barePrice(trees: readonly RolloutTree[]): number {
    if (!this.price) return 1;
    return Math.max(1, Math.round(meanBareCost(trees, this.price.unit) ?? this.price.root));
  }

  /**
   * The step's cap in its unit that gives a planner `trajectories` bare rollouts to plan with (the
   * inverse of what `planRoots` hands it), and why a smaller one gives it fewer.
   */
  capFor(trajectories: number): number {
    const reserve = this.unit === 'tokens' ? this.settings.maxTokensPerTurn : 0;
    return trajectories * (this.price?.root ?? 1) + reserve;
  }

  /** Why the cap pays for `trajectories` bare rollouts: the price and what is held back. */
  pricing(trajectories: number): string {
    if (!this.price) return `${trajectories} trajector${trajectories === 1 ? 'y' : 'ies'} to plan with`;
    const reserve =
      this.unit === 'tokens' ? ` after the last ${this.settings.maxTokensPerTurn} (engine.maxTokensPerTurn) held back for the call in flight` : '';
    return `${trajectories} trajector${trajectories === 1 ? 'y' : 'ies'} to plan with at ${this.price.root} ${this.unit} each${reserve}`;
  }

  /** What a planner's total counts: trajectories, or their cost in turns or tokens. */
  what(trajectories: string): string {
    return this.price ? `${this.price.unit} of ${trajectories}` : trajectories;
  }

  /** A trajectory ended: admission replaces its expected cost by what its own turns cost (0 if it left no node). */
  settle(tree: RolloutTree, r: { firstNodeId: string; leafId?: string }): void {
    const price = this.price;
    if (price) this.admission?.settle(r.firstNodeId, () => (r.leafId ? suffixCost(ownTurns(tree, r.firstNodeId, r.leafId), price) : 0));
  }
}

/**
 * The refusal of a step whose round 0 plans nothing (it would run no trajectory and train on nothing
 * while looking complete), naming the smallest budget for which the same planner plans one: planners
 * are pure in their input, so asking again with more budget changes nothing else.
 */
export function emptyStepRefusal(strategy: Allocator, budget: StepBudget, candidates: readonly RootCandidate[], rng: Rng): BudgetTooSmall {
  const had = Math.floor(budget.spendable(strategy.cap) / (budget.price?.root ?? 1));
  let smallest = Number.POSITIVE_INFINITY;
  for (let b = Math.max(1, had + 1); b <= 4096; b++) {
    const plan = strategy.roots.plan({ candidates, round: 0, remaining: b, results: new Map(), rng: rng.fork('roots/0/smallest') });
    if ([...plan.values()].some((m) => m > 0)) {
      smallest = budget.capFor(b);
      break;
    }
  }
  return new BudgetTooSmall(strategy.cap, budget.unit, smallest, `the strategy's root planner plans no rollout from ${budget.pricing(had)}`);
}
