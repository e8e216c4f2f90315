import { DEFAULT_SCHEDULE, type RootCandidate, type RootRoundInput } from '../allocate/types.ts';
import { createTree, root } from '../tree/index.ts';
import type { Prompt, RolloutTree } from '../tree/index.ts';
import { isCancellation, linkedSignal } from './call.ts';
import { rootCandidates, type Scorer } from './candidates.ts';
import { addProgress, type EngineEvent } from './events.ts';
import { expandPrompt, expandStep, type Expansion } from './expansion.ts';
import { checkCounts, type CountsRule } from './plan-check.ts';
import { leftoverTopUp } from './leftover-top-up.ts';
import { liveTape, recordTape, replayTape, type Tape } from './recorder.ts';
import type { RemoteRound } from './remote-round.ts';
import { Semaphore } from './semaphore.ts';
import { engineSettings, type EngineSettings } from './settings.ts';
import { emptyStepRefusal, StepBudget } from './step-budget.ts';
import { StepTally } from './step-tally.ts';
import { StepTrajectories } from './step-trajectories.ts';
import { addReplayCost, addReplayMismatches } from './replay-counts.ts';
import { EngineError, type Allocator, type StepOptions, type StepResult, type StrategyRoots } from './step-options.ts';
import type { TrajectoryContext } from './trajectory.ts';

/**
 * One step of rollouts (TRACE-SPEC §3 steps 2–4), in four named phases (see StepRun):
 *  1. root rounds — roots.plan(round 0, and 1, 2, … for a planner that asks) until it returns an
 *     empty plan; each round sees the rewards of the bare rollouts of earlier rounds (the DAPO
 *     protocol); bare rollout slots are fixed at plan time, so node ids never depend on timing;
 *  2. bare rollouts of every planned prompt, all in flight together under one semaphore;
 *  3. per-prompt expansion, as soon as that prompt's bare rollouts of the round are done (no global
 *     wait): prefix candidates with q = Ṽ(H), prefixes.plan with budget continuationBudget(m), then K
 *     continuations per chosen prefix from env.restore(prompt, prefix turns). A prompt is expanded
 *     once, the first time its bare rollouts finish; roots it gets in later rounds stay bare. A schedule
 *     of kind 'step' is instead planned once, after round 0's bare rollouts have all finished, over
 *     every prompt's prefixes with the summed budget;
 *  4. leftover top-up — once every continuation has run, leftover.plan turns the trajectories still
 *     under the cap into extra bare rollouts (not expanded).
 */
export async function runStep<S>(options: StepOptions<S>): Promise<StepResult> {
  const run = new StepRun(options);
  try {
    if (options.remote) await run.remoteRound(options.remote);
    else await run.rootRounds();
    await run.leftoverTopUp();
  } finally {
    run.detach();
  }
  return run.result();
}

/** The state of one step and its phases; runStep is the only user. */
class StepRun<S> {
  private readonly settings: EngineSettings;
  private readonly strategy?: Allocator;
  /** The strategy's case of the options (undefined for a fixed root plan). */
  private readonly planned?: StrategyRoots;
  private readonly byId = new Map<string, Prompt>();
  private readonly signal: AbortSignal;
  readonly detach: () => void;
  private readonly scorer: Scorer;
  private readonly tape: Tape;
  private readonly budget: StepBudget;
  private readonly tally = new StepTally();
  private readonly trajectories: StepTrajectories<S>;
  private readonly replayCost: StepResult['replayCost'] = { restores: 0, steps: 0, ms: 0 };
  /** What the remote round's parts sent their own servers (StepResult.partsLoad). */
  private partsLoad?: StepResult['partsLoad'];
  private readonly semaphore: Semaphore;
  private readonly trees = new Map<string, RolloutTree>();
  private readonly contexts = new Map<string, TrajectoryContext<S>>();
  private readonly candidates: readonly RootCandidate[];
  private readonly rounds: Array<Map<string, number>> = [];
  private rootPlanMs = 0;
  /** Round 0's importance weights of a planner that has them (RootPlanner.weights). */
  private weights?: ReadonlyMap<string, number>;

  constructor(private readonly options: StepOptions<S>) {
    this.settings = engineSettings(options.settings);
    this.planned = options.strategy ? options : undefined;
    this.strategy = options.strategy;
    for (const p of options.prompts) {
      if (this.byId.has(p.id)) throw new EngineError(`duplicate prompt id "${p.id}" in prompts`);
      this.byId.set(p.id, p);
    }
    ({ signal: this.signal, detach: this.detach } = linkedSignal(options.signal));
    this.scorer = options.scorer ?? ((hs) => hs.map(() => 0.5));
    this.tape = options.replay ? replayTape(options.replay) : options.record ? recordTape(options.record, isCancellation) : liveTape;
    this.budget = new StepBudget(this.strategy, options.caps, this.planned?.rootCost, this.settings);
    this.semaphore = new Semaphore(this.settings.concurrency);
    this.trajectories = new StepTrajectories(this.budget, this.tally, this.signal, (e) => this.emit(e), this.settings.concurrency);
    this.candidates = this.planned?.candidates ?? rootCandidates(options.prompts, options.env, this.scorer);
  }

  /** Phases 1–3: root rounds, their bare rollouts, and each prompt's expansion as soon as it is ready. */
  async rootRounds(): Promise<void> {
    const { strategy } = this;
    const vOf = new Map(this.candidates.map((c) => [c.promptId, c.v]));
    const results = new Map<string, number[]>();
    const expansions: Array<Promise<void>> = [];
    const expanded = new Set<string>();
    const moreRounds = strategy?.roots.rounds === 'until-empty';
    const perPrompt = (strategy?.prefixes?.schedule ?? DEFAULT_SCHEDULE).kind === 'per-prompt';
    const roundZero: Array<TrajectoryContext<S>> = [];
    for (let round = 0; !this.signal.aborted && (round === 0 || moreRounds); round++) {
      const plan = this.rootRound(round, results);
      if (!plan) break;
      const promptRuns: Array<Promise<void>> = [];
      let count = 0;
      for (const [id, m] of plan) {
        if (m === 0) continue;
        const ctx = this.contextFor(this.byId.get(id)!);
        const r = root(ctx.tree);
        if (r.predicted === undefined && vOf.has(id)) r.predicted = vOf.get(id);
        if (r.weight === undefined && this.weights?.has(id)) r.weight = this.weights.get(id);
        count += m;
        promptRuns.push(
          this.trajectories.bare(ctx, m).then((res) => {
            const rewards = results.get(id) ?? [];
            for (const x of res) if (x.reward !== undefined) rewards.push(x.reward);
            results.set(id, rewards);
            if (!expanded.has(id)) {
              expanded.add(id);
              if (perPrompt) expansions.push(expandPrompt(this.expansion(), ctx));
              else roundZero.push(ctx);
            }
          }),
        );
      }
      this.emit({ kind: 'roots', round, prompts: plan.size, trajectories: count, progress: this.tally.snapshot() });
      await Promise.all(promptRuns);
      if (round === 0 && !perPrompt) expansions.push(expandStep(this.expansion(), roundZero));
    }
    await Promise.all(expansions);
  }

  /** Root round `round`'s plan, checked and kept; undefined when it plans nothing (the rounds end). */
  private rootRound(round: number, results: ReadonlyMap<string, readonly number[]>): Map<string, number> | undefined {
    const { strategy } = this;
    const plan = strategy ? this.planRoots(strategy, round, results) : new Map(this.options.rootPlan);
    if (round === 0 && strategy && !this.signal.aborted && [...plan.values()].every((m) => m === 0))
      throw emptyStepRefusal(strategy, this.budget, this.candidates, this.options.rng);
    if (plan.size === 0) return undefined;
    checkCounts(plan, `root plan round ${round}`, 'm', this.promptCounts());
    this.rounds.push(plan);
    return plan;
  }

  /**
   * Phases 1–3 with phases 2–3 run elsewhere (options.remote): round 0 is planned here, its trees come
   * back finished and are taken in as this step's, their spend into this step's ledger.
   */
  async remoteRound(remote: RemoteRound): Promise<void> {
    if (this.signal.aborted) return;
    const plan = this.rootRound(0, new Map());
    if (!plan) return;
    const planned = [...plan.values()].reduce((a, b) => a + b, 0);
    this.emit({ kind: 'roots', round: 0, prompts: plan.size, trajectories: planned, progress: this.tally.snapshot() });
    const price = this.budget.price;
    const out = await remote.run({
      plan,
      candidates: this.candidates,
      ...(this.weights ? { weights: this.weights } : {}),
      ...(price ? { price: { ...price, available: this.budget.spendable(this.budget.ledger.remaining(price.unit)) } } : {}),
      signal: this.signal,
      onProgress: (parts) => this.emit({ kind: 'workers', progress: addProgress(this.tally.snapshot(), parts) }),
    });
    for (const tree of out.trees) {
      const prompt = this.byId.get(tree.promptId);
      if (!prompt || !(plan.get(tree.promptId)! > 0) || this.trees.has(tree.promptId))
        throw new EngineError(`a remote part returned a tree for "${tree.promptId}", which is not a prompt it was given`);
      this.contextFor(prompt, tree);
    }
    this.budget.ledger.absorb(out.spend);
    this.tally.absorb(out);
    addReplayMismatches(this.tally.replayMismatches, out.replayMismatches);
    addReplayCost(this.replayCost, out.replayCost);
    this.partsLoad = out.serverLoad;
  }

  /** One root round's plan, timed with the caller's clock (the root solve is allocation, not rollout). */
  private planRoots(strategy: Allocator, round: number, results: ReadonlyMap<string, readonly number[]>): Map<string, number> {
    const clock = this.planned?.clock;
    const t0 = clock?.();
    const root = this.budget.price?.root ?? 1;
    const input: RootRoundInput = {
      candidates: this.candidates,
      round,
      remaining: this.budget.remaining(root),
      results,
      rng: this.options.rng.fork(`roots/${round}`),
    };
    const plan = strategy.roots.plan(input);
    if (round === 0 && strategy.roots.weights) this.weights = strategy.roots.weights(input);
    if (t0 !== undefined) this.rootPlanMs += clock!() - t0;
    return plan;
  }

  /** Phase 4 (leftover-top-up.ts): budget that could not be placed as continuations becomes extra bare rollouts. */
  leftoverTopUp(): Promise<void> {
    const planner = this.strategy?.leftover;
    if (!planner) return Promise.resolve();
    return leftoverTopUp({
      planner,
      budget: this.budget,
      trees: this.trees,
      candidates: this.candidates,
      rng: this.options.rng,
      signal: this.signal,
      prompts: this.promptCounts(),
      run: async (plan, total, price) => {
        this.rounds.push(plan);
        const runs: Array<Promise<unknown>> = [];
        for (const [id, d] of plan) if (d > 0) runs.push(this.trajectories.bare(this.contextFor(this.byId.get(id)!), d, price));
        this.emit({ kind: 'roots', round: this.rounds.length - 1, prompts: plan.size, trajectories: total, progress: this.tally.snapshot() });
        await Promise.all(runs);
      },
    });
  }

  /** Counts naming prompts of this step (roots, leftover). */
  private promptCounts(): CountsRule {
    return { known: this.byId, knownAs: `among the ${this.byId.size} prompts` };
  }

  /** What phase 3 plans with (undefined without a prefix planner); what it plans runs as `trajectories.continuations`. */
  private expansion(): Expansion<S> | undefined {
    const planner = this.strategy?.prefixes;
    if (!planner || this.signal.aborted) return undefined;
    const { env, rng } = this.options;
    return {
      planner,
      env,
      rng,
      scorer: this.scorer,
      budget: this.budget,
      signal: this.signal,
      launch: (ctx, prefixes, plan, firstRound) => this.trajectories.continuations(ctx, prefixes, plan, firstRound),
    };
  }

  /** The prompt's trajectory context, made on first use around `given` (a tree grown elsewhere) or a new tree. */
  private contextFor(p: Prompt, given?: RolloutTree): TrajectoryContext<S> {
    let ctx = this.contexts.get(p.id);
    if (!ctx) {
      const tree = given ?? createTree(p.id, p.question);
      this.trees.set(p.id, tree);
      const { env, policy, rng, greedy, parseAction } = this.options;
      const admission = this.budget.admission;
      ctx = {
        tree,
        prompt: p,
        rendered: env.render(p),
        env,
        policy,
        ledger: this.budget.ledger,
        settings: this.settings,
        semaphore: this.semaphore,
        tape: this.tape,
        rng,
        signal: this.signal,
        greedy,
        parseAction,
        onRetry: (key, attempt, error, delayMs) => this.emit({ kind: 'retry', key, attempt, error, delayMs, progress: this.tally.snapshot() }),
        onTurn: () => void this.tally.progress.turns++,
        onRestore: (cost) => addReplayCost(this.replayCost, { restores: 1, ...cost }),
        ...(admission ? { covers: admission.admit.bind(admission) } : {}),
      };
      this.contexts.set(p.id, ctx);
    }
    return ctx;
  }

  private emit(e: EngineEvent): void {
    this.options.onEvent?.(e);
  }

  result(): StepResult {
    const cancelled = this.signal.aborted;
    this.emit({ kind: 'done', cancelled, progress: this.tally.snapshot() });
    return {
      trees: this.options.prompts.flatMap((p) => (this.trees.has(p.id) ? [this.trees.get(p.id)!] : [])),
      rendered: new Map([...this.contexts].map(([id, ctx]) => [id, ctx.rendered])),
      spend: this.budget.ledger.spend(),
      rounds: this.rounds,
      progress: this.tally.progress,
      failures: this.tally.failures,
      cancelled,
      settings: this.settings,
      ledger: this.budget.ledger,
      rootPlanMs: this.rootPlanMs,
      replayMismatches: this.tally.replayMismatches,
      replayCost: this.replayCost,
      ...(this.partsLoad ? { partsLoad: this.partsLoad } : {}),
    };
  }
}
