import { DEFAULT_SCHEDULE, type PrefixCandidate, type PrefixPlanner, type PrefixRoundInput } from '../allocate/types.ts';
import type { Environment } from '../env/types.ts';
import { root } from '../tree/index.ts';
import type { Rng } from '../util/rng.ts';
import { costs, prefixCandidates, type Scorer } from './candidates.ts';
import { checkCounts, type CountsRule } from './plan-check.ts';
import type { StepBudget } from './step-budget.ts';
import { EngineError } from './step-options.ts';
import type { TrajectoryContext, TrajectoryResult } from './trajectory.ts';

/**
 * Phase 3 of a step, planning: which prefixes get continuations, by the strategy's prefix planner and
 * its schedule. The engine runs what is planned (`launch`).
 */
export interface Expansion<S> {
  planner: PrefixPlanner;
  env: Environment<S>;
  scorer: Scorer;
  rng: Rng;
  budget: StepBudget;
  signal: AbortSignal;
  /** Runs one prompt's planned continuations (`firstRound`: the prompt counts as expanded); resolves with their results. */
  launch(ctx: TrajectoryContext<S>, prefixes: readonly PrefixCandidate[], plan: ReadonlyMap<string, number>, firstRound: boolean): Promise<TrajectoryResult[]>;
}

/**
 * Phase 3 for one prompt: score its intermediate prefixes, plan K per prefix, run the continuations.
 * A schedule with `rounds` R > 1 splits the prompt's budget over R rounds; round r > 0 starts when
 * round r − 1's continuations have finished and plans over their prefixes (the tree grows deeper
 * per prompt, without waiting on other prompts). Budget a round cannot place moves on to the next;
 * after the last it stays in the ledger for the leftover top-up.
 */
export async function expandPrompt<S>(x: Expansion<S> | undefined, ctx: TrajectoryContext<S>): Promise<void> {
  if (!x) return;
  const { planner } = x;
  const m = root(ctx.tree).children.length;
  let left = planner.continuationBudget(m) * x.budget.barePrice([ctx.tree]);
  const schedule = planner.schedule ?? DEFAULT_SCHEDULE;
  const rounds = schedule.kind === 'per-prompt' ? schedule.rounds : 1;
  let starts: string[] | undefined;
  for (let round = 0; round < rounds && left > 0 && !x.signal.aborted; round++) {
    const budget = round === rounds - 1 ? left : Math.floor(left / (rounds - round));
    if (!(budget > 0)) continue;
    const prefixes = prefixCandidates(ctx.tree, ctx.prompt, x.env as Environment<unknown>, x.scorer, {
      starts,
      withRoot: schedule.offersRoot,
      price: x.budget.price,
    });
    if (prefixes.length === 0) return;
    // Round 0 keeps the one-round stream name, so runs without extra rounds draw exactly as before.
    const input: PrefixRoundInput = {
      promptId: ctx.prompt.id,
      m,
      prefixes,
      budget,
      round,
      rng: x.rng.fork(round === 0 ? `prefix/${ctx.prompt.id}` : `prefix/${ctx.prompt.id}/${round}`),
    };
    const plan = planner.plan(input);
    const total = checkCounts(plan, `prefixes.plan for prompt "${ctx.prompt.id}"${round ? ` (round ${round})` : ''}`, 'K', prefixCounts(x, prefixes, budget));
    left -= total;
    const runs = x.launch(ctx, prefixes, plan, round === 0);
    // The next round expands the prefixes of this round's continuations (their own turns only).
    const done = await runs;
    starts = done.filter((r) => r.started).map((r) => r.firstNodeId);
  }
}

/**
 * Phase 3 for a schedule of kind 'step': every prompt of round 0 has finished its bare rollouts; one
 * plan spends the summed continuation budget over all their prefixes (node ids are unique across
 * prompts: they start with the prompt's id).
 */
export async function expandStep<S>(x: Expansion<S> | undefined, ctxs: ReadonlyArray<TrajectoryContext<S>>): Promise<void> {
  if (!x) return;
  const { planner } = x;
  let budget = 0;
  let m = 0;
  const mine: Array<{ ctx: TrajectoryContext<S>; prefixes: PrefixCandidate[] }> = [];
  for (const ctx of ctxs) {
    const mi = root(ctx.tree).children.length;
    m += mi;
    budget += planner.continuationBudget(mi) * x.budget.barePrice([ctx.tree]);
    mine.push({
      ctx,
      prefixes: prefixCandidates(ctx.tree, ctx.prompt, x.env as Environment<unknown>, x.scorer, {
        withRoot: (planner.schedule ?? DEFAULT_SCHEDULE).offersRoot,
        price: x.budget.price,
      }),
    });
  }
  const prefixes = mine.flatMap((x) => x.prefixes);
  if (prefixes.length === 0 || !(budget > 0)) return;
  const plan = planner.plan({ promptId: '', m, prefixes, budget, round: 0, rng: x.rng.fork('prefix/step') });
  if (new Set(prefixes.map((c) => c.id)).size !== prefixes.length)
    throw new EngineError("prefix candidates of different prompts share an id (a prompt id that is another prompt's node id?)");
  checkCounts(plan, 'prefixes.plan for the step', 'K', prefixCounts(x, prefixes, budget));
  await Promise.all(
    mine.map(({ ctx, prefixes: own }) => x.launch(ctx, own, new Map(own.filter((c) => plan.has(c.id)).map((c) => [c.id, plan.get(c.id)!])), true)),
  );
}

/** Counts naming the given prefix candidates, within `budget`. */
function prefixCounts<S>(x: Expansion<S>, prefixes: readonly PrefixCandidate[], budget: number): CountsRule {
  return {
    known: new Set(prefixes.map((c) => c.id)),
    knownAs: 'one of its prefix candidates',
    limit: budget,
    what: x.budget.what('continuations'),
    cost: costs(prefixes),
  };
}
