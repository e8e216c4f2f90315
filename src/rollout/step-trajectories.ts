import type { PrefixCandidate } from '../allocate/types.ts';
import { childId, getNode, nextSlot, root } from '../tree/index.ts';
import type { EngineEvent } from './events.ts';
import { Semaphore } from './semaphore.ts';
import type { StepBudget } from './step-budget.ts';
import type { StepTally } from './step-tally.ts';
import { runTrajectory, type TrajectoryContext, type TrajectoryResult, type TrajectoryStart } from './trajectory.ts';

/**
 * Starts a step's trajectories, bare rollouts and continuations of planned prefixes, and takes each
 * in when it ends (its cost settled in the budget, its end counted and reported). Their slots are
 * fixed when they are planned, before any runs, so node ids never depend on timing.
 */
export class StepTrajectories<S> {
  /** Trajectories allowed to run at once in a priced budget (see `run`); none without a price. */
  private readonly slots?: Semaphore;

  constructor(
    private readonly budget: StepBudget,
    private readonly tally: StepTally,
    private readonly signal: AbortSignal,
    private readonly emit: (e: EngineEvent) => void,
    concurrency: number,
  ) {
    if (budget.price) this.slots = new Semaphore(2 * concurrency);
  }

  /**
   * m bare rollouts of one prompt in the next free slots under its root (phase 2, the leftover top-up,
   * and K planned at a root candidate), each expected to cost `expectedCost` in a priced budget.
   */
  bare(ctx: TrajectoryContext<S>, m: number, expectedCost?: number): Promise<TrajectoryResult[]> {
    const first = nextSlot(root(ctx.tree));
    this.tally.progress.barePlanned += m;
    const price = this.budget.price;
    const cost = price ? { expectedCost: expectedCost ?? price.root } : {};
    return Promise.all(
      Array.from({ length: m }, (_, k) =>
        this.run(ctx, { fromId: ctx.prompt.id, slot: first + k, origin: 'bare', ...cost }).then((res) => {
          this.ended(ctx, 'bare', res);
          return res;
        }),
      ),
    );
  }

  /**
   * Runs one prompt's planned continuations (and, K at its candidate of kind 'root', K more bare
   * rollouts, not expanded) and reports the expansion (`firstRound`: the prompt counts as expanded);
   * resolves with the continuations' results. Slots are assigned here, in candidate order, before
   * anything runs: ids stay deterministic.
   */
  continuations(
    ctx: TrajectoryContext<S>,
    prefixes: readonly PrefixCandidate[],
    plan: ReadonlyMap<string, number>,
    firstRound: boolean,
  ): Promise<TrajectoryResult[]> {
    for (const c of prefixes) getNode(ctx.tree, c.id).predicted ??= c.q;
    const runs: Array<Promise<TrajectoryResult>> = [];
    // K at the candidate of kind 'root' (a schedule that offersRoot) is K more bare rollouts, not continuations.
    const rootCandidate = prefixes.find((c) => c.kind === 'root');
    const resampled = rootCandidate ? (plan.get(rootCandidate.id) ?? 0) : 0;
    const extraBare = resampled > 0 ? this.bare(ctx, resampled, this.budget.barePrice([ctx.tree])) : Promise.resolve([]);
    for (const c of prefixes) {
      const K = plan.get(c.id) ?? 0;
      if (K < 1 || c.kind === 'root') continue;
      const node = getNode(ctx.tree, c.id);
      node.expanded = (node.expanded ?? 0) + K;
      const first = nextSlot(node);
      for (let k = 0; k < K; k++) {
        this.tally.progress.continuationPlanned++;
        runs.push(
          this.run(ctx, { fromId: c.id, slot: first + k, origin: 'continuation', ...(c.cost !== undefined ? { expectedCost: c.cost } : {}) }).then((r) => {
            this.ended(ctx, 'continuation', r);
            return r;
          }),
        );
      }
    }
    if (firstRound) this.tally.progress.promptsExpanded++;
    const planned = [...plan.values()];
    this.emit({
      kind: 'expand',
      promptId: ctx.prompt.id,
      prefixes: prefixes.length,
      expanded: planned.filter((k) => k > 0).length,
      continuations: planned.reduce((a, b) => a + b, 0) - resampled,
      progress: this.tally.snapshot(),
    });
    return Promise.all([Promise.all(runs), extraBare]).then(([done]) => done);
  }

  /**
   * Runs one trajectory. In priced budgets at most 2 × concurrency trajectories run at once: otherwise
   * every planned trajectory makes its first call at the start (the semaphore is per call), so all are
   * admitted before any cost is known, and when the plan's price was low (the policy changed since the
   * last step) the cap cuts many of them halfway. Gated, admission sees the real cost of those that
   * finished, and the cap can cut at most the few running at the end.
   */
  private async run(ctx: TrajectoryContext<S>, start: TrajectoryStart): Promise<TrajectoryResult> {
    const slots = this.slots;
    if (!slots) return runTrajectory(ctx, start);
    try {
      await slots.acquire(this.signal);
    } catch {
      return { firstNodeId: childId(start.fromId, start.slot), started: false };
    }
    try {
      return await runTrajectory(ctx, start);
    } finally {
      slots.release();
    }
  }

  /** A trajectory ended (or never started): its cost is settled in the budget, its end counted and reported. */
  private ended(ctx: TrajectoryContext<S>, origin: 'bare' | 'continuation', r: TrajectoryResult): void {
    this.budget.settle(ctx.tree, r);
    this.tally.ended(ctx.tree, origin, r);
    this.emit({
      kind: 'trajectory',
      origin,
      promptId: ctx.prompt.id,
      firstNodeId: r.firstNodeId,
      end: r.end ?? 'not_started',
      progress: this.tally.snapshot(),
    });
  }
}
