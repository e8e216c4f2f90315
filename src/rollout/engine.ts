import { setMaxListeners } from 'node:events';
import type { PrefixRoundInput, RootCandidate, RootRoundInput, Strategy } from '../allocate/types.ts';
import { BudgetLedger, type Caps, type Spend } from '../budget/index.ts';
import type { Environment } from '../env/types.ts';
import type { Policy } from '../policy/types.ts';
import { createTree, getNode, root } from '../tree/index.ts';
import type { Prompt, RolloutTree, TurnError } from '../tree/index.ts';
import type { Rng } from '../util/rng.ts';
import { isCancellation } from './call.ts';
import { emptyProgress, type EngineEvent, type Progress } from './events.ts';
import { knowsTruth, prefixCandidates, type Scorer } from './prefixes.ts';
import { liveTape, recordTape, replayTape, type Recording, type Tape } from './recorder.ts';
import { Semaphore } from './semaphore.ts';
import { engineSettings, type EngineSettings, type EngineSettingsInput } from './settings.ts';
import { runTrajectory, type ActionParser, type TrajectoryContext, type TrajectoryResult } from './trajectory.ts';

/** Misuse of the engine (unknown prompt ids in a plan, bad counts, conflicting options). */
export class EngineError extends Error {
  override name = 'EngineError';
}

/** The allocation side the engine needs: a Strategy's cap and parts (its name is not needed here). */
export type Allocator = Omit<Strategy, 'name'>;

export interface StepOptions<S> {
  prompts: readonly Prompt[];
  env: Environment<S>;
  policy: Policy;
  rng: Rng;
  /**
   * Root counts and prefix plans; the step's ledger is capped at its `trajectoryCap`. Without it,
   * `rootPlan` must be given, nothing is expanded and the trajectories are not capped.
   */
  strategy?: Allocator;
  /** Caps on policy calls and generated tokens for this step (the trajectory cap is the strategy's). */
  caps?: Omit<Caps, 'trajectories'>;
  /** A fixed one-round root plan (prompt id → m); overrides strategy.planRoots. */
  rootPlan?: ReadonlyMap<string, number>;
  /** Ṽ(H) for roots and prefixes; default 0.5 everywhere (the cold-start predictor). */
  scorer?: Scorer;
  /** Root candidates for planRoots; default: every prompt with v = scorer(root), p from the env if it knows truth. */
  candidates?: readonly RootCandidate[];
  settings?: EngineSettingsInput;
  signal?: AbortSignal;
  onEvent?: (event: EngineEvent) => void;
  /** Reads actions out of text when the policy returns text only (default: the Search-R1 parser). */
  parseAction?: ActionParser;
  /** Greedy decoding (evaluation). */
  greedy?: boolean;
  /** Store every response and tool result here. */
  record?: Recording;
  /** Answer every call from this recording instead of calling the policy and tools. */
  replay?: Recording;
}

export interface StepResult {
  /** One tree per prompt that received roots, in the order of `prompts`. */
  trees: RolloutTree[];
  /** What this step spent. */
  spend: Spend;
  /** The root plan of each round (DAPO-like strategies use several). */
  rounds: Array<Map<string, number>>;
  progress: Progress;
  /** Trajectory failures by code (timeouts, server errors, tool errors, budget). */
  failures: Partial<Record<TurnError['code'], number>>;
  cancelled: boolean;
  settings: EngineSettings;
  /** The step's ledger (created here from the caps), for checks after the step. */
  ledger: BudgetLedger;
}

/**
 * One step of rollouts (TRACE-SPEC §3 steps 2–4):
 *  1. roots — planRoots(round 0, 1, …) until it returns an empty plan; each round sees the rewards of
 *     the bare rollouts of earlier rounds (the DAPO protocol); bare rollout slots 0..m−1 (continuing
 *     after earlier rounds' slots) are fixed at plan time, so node ids never depend on timing;
 *  2. bare rollouts of every planned prompt, all in flight together under one semaphore;
 *  3. per prompt, as soon as its bare rollouts of that round are done (no global wait): prefix
 *     candidates with q = Ṽ(H), planPrefixes with budget prefixBudget(m), then K continuations per
 *     chosen prefix from env.restore(prompt, prefix turns). A prompt is expanded once, the first time
 *     its bare rollouts finish; roots it gets in later rounds stay bare.
 */
export async function runStep<S>(options: StepOptions<S>): Promise<StepResult> {
  const settings = engineSettings(options.settings);
  const { prompts, env, rng, strategy } = options;
  if (!strategy && !options.rootPlan) throw new EngineError('runStep needs a strategy or a rootPlan');
  if (options.record && options.replay) throw new EngineError('record and replay cannot be used in the same run');
  const byId = new Map<string, Prompt>();
  for (const p of prompts) {
    if (byId.has(p.id)) throw new EngineError(`duplicate prompt id "${p.id}" in prompts`);
    byId.set(p.id, p);
  }
  // One internal signal linked to the caller's: every queued request listens to it, so lift Node's
  // listener warning on our own signal instead of the caller's.
  const internal = new AbortController();
  setMaxListeners(0, internal.signal);
  if (options.signal?.aborted) internal.abort(options.signal.reason);
  // Removed again when the step ends: a long run passes one signal to every step, and listeners left
  // behind would pile up on it.
  const onAbort = () => internal.abort(options.signal!.reason);
  options.signal?.addEventListener('abort', onAbort, { once: true });
  const signal = internal.signal;
  const scorer: Scorer = options.scorer ?? ((hs) => hs.map(() => 0.5));
  const tape: Tape = options.replay ? replayTape(options.replay) : options.record ? recordTape(options.record, isCancellation) : liveTape;
  const ledger = new BudgetLedger({ ...options.caps, ...(strategy ? { trajectories: strategy.trajectoryCap } : {}) });
  const progress = emptyProgress();
  const failures: StepResult['failures'] = {};
  const emit = (e: EngineEvent) => options.onEvent?.(e);
  const semaphore = new Semaphore(settings.concurrency);
  const trees = new Map<string, RolloutTree>();
  const contexts = new Map<string, TrajectoryContext<S>>();

  const contextFor = (p: Prompt): TrajectoryContext<S> => {
    let ctx = contexts.get(p.id);
    if (!ctx) {
      const tree = createTree(p.id, p.question);
      trees.set(p.id, tree);
      ctx = {
        tree,
        prompt: p,
        rendered: env.render(p),
        env,
        policy: options.policy,
        ledger,
        settings,
        semaphore,
        tape,
        rng,
        signal,
        greedy: options.greedy,
        parseAction: options.parseAction,
        onRetry: (key, attempt, error, delayMs) => emit({ kind: 'retry', key, attempt, error, delayMs, progress: { ...progress } }),
        onTurn: () => void progress.turns++,
      };
      contexts.set(p.id, ctx);
    }
    return ctx;
  };

  const finished = (ctx: TrajectoryContext<S>, origin: 'bare' | 'continuation', r: TrajectoryResult) => {
    if (origin === 'bare') progress.bareDone++;
    else progress.continuationDone++;
    if (r.end === 'error') {
      progress.failed++;
      const code = r.leafId ? getNode(ctx.tree, r.leafId).turn?.error?.code : undefined;
      if (code) failures[code] = (failures[code] ?? 0) + 1;
    }
    emit({ kind: 'trajectory', origin, promptId: ctx.prompt.id, firstNodeId: r.firstNodeId, end: r.end ?? 'not_started', progress: { ...progress } });
  };

  const expand = async (ctx: TrajectoryContext<S>): Promise<void> => {
    const planner = strategy?.prefixes;
    if (!planner || signal.aborted) return;
    const m = root(ctx.tree).children.length;
    const budget = planner.continuationBudget(m);
    if (!(budget > 0)) return;
    const prefixes = prefixCandidates(ctx.tree, ctx.prompt, env as Environment<unknown>, scorer);
    if (prefixes.length === 0) return;
    const input: PrefixRoundInput = { promptId: ctx.prompt.id, m, prefixes, budget, rng: rng.fork(`prefix/${ctx.prompt.id}`) };
    const plan = planner.plan(input);
    let total = 0;
    const known = new Set(prefixes.map((c) => c.id));
    for (const [id, K] of plan) {
      if (!known.has(id)) throw new EngineError(`planPrefixes returned "${id}", which is not a prefix candidate of prompt "${ctx.prompt.id}"`);
      if (!Number.isInteger(K) || K < 0) throw new EngineError(`planPrefixes gave prefix "${id}" K = ${K}; K must be a non-negative integer`);
      total += K;
    }
    if (total > budget) throw new EngineError(`planPrefixes spent ${total} continuations on prompt "${ctx.prompt.id}" but its budget is ${budget}`);
    for (const c of prefixes) getNode(ctx.tree, c.id).predicted = c.q;
    const runs: Array<Promise<void>> = [];
    // Slots are assigned here, in candidate order, before anything runs: ids stay deterministic.
    for (const c of prefixes) {
      const K = plan.get(c.id) ?? 0;
      if (K < 1) continue;
      const node = getNode(ctx.tree, c.id);
      node.expanded = K;
      const first = nextSlot(node.children);
      for (let k = 0; k < K; k++) {
        progress.continuationPlanned++;
        runs.push(runTrajectory(ctx, { fromId: c.id, slot: first + k, origin: 'continuation' }).then((r) => finished(ctx, 'continuation', r)));
      }
    }
    progress.promptsExpanded++;
    emit({ kind: 'expand', promptId: ctx.prompt.id, prefixes: prefixes.length, expanded: [...plan.values()].filter((k) => k > 0).length, continuations: total, progress: { ...progress } });
    await Promise.all(runs);
  };

  const candidates = options.candidates ?? defaultCandidates(prompts, env, scorer);
  const vOf = new Map(candidates.map((c) => [c.promptId, c.v]));
  const results = new Map<string, number[]>();
  const rounds: Array<Map<string, number>> = [];
  const expansions: Array<Promise<void>> = [];
  const expanded = new Set<string>();

  /**
   * After every expansion: budget the strategy could not place as continuations becomes extra bare
   * rollouts (strategy.planLeftover). They are not expanded; they run after all continuations, so
   * the leftover is known exactly.
   */
  const topUp = async (): Promise<void> => {
    const remaining = ledger.remainingTrajectories();
    if (!strategy?.leftover || options.rootPlan || signal.aborted || !(remaining > 0) || !Number.isFinite(remaining)) return;
    const roots = new Map([...trees].map(([id, t]) => [id, root(t).children.filter((c) => t.nodes[c].origin === 'bare').length]));
    const plan = strategy.leftover.plan({ candidates, roots, remaining, rng: rng.fork('leftover') });
    let total = 0;
    for (const [id, d] of plan) {
      if (!byId.has(id)) throw new EngineError(`planLeftover names prompt "${id}", which is not among the ${prompts.length} prompts`);
      if (!Number.isInteger(d) || d < 0) throw new EngineError(`planLeftover gives prompt "${id}" ${d} rollouts; expected a non-negative integer`);
      total += d;
    }
    if (total > remaining) throw new EngineError(`planLeftover spent ${total} trajectories but only ${remaining} remain`);
    if (total === 0) return;
    rounds.push(plan);
    const runs: Array<Promise<void>> = [];
    for (const [id, d] of plan) {
      const ctx = contextFor(byId.get(id)!);
      const first = nextSlot(root(ctx.tree).children);
      progress.barePlanned += d;
      for (let k = 0; k < d; k++) runs.push(runTrajectory(ctx, { fromId: id, slot: first + k, origin: 'bare' }).then((res) => finished(ctx, 'bare', res)));
    }
    emit({ kind: 'roots', round: rounds.length - 1, prompts: plan.size, trajectories: total, progress: { ...progress } });
    await Promise.all(runs);
  };

  const moreRounds = strategy?.roots.rounds === 'until-empty' && !options.rootPlan;
  for (let round = 0; !signal.aborted && (round === 0 || moreRounds); round++) {
    const plan = options.rootPlan
      ? new Map(options.rootPlan)
      : strategy!.roots.plan({ candidates, round, budget: strategy!.trajectoryCap, remaining: ledger.remainingTrajectories(), results, rng: rng.fork(`roots/${round}`) } satisfies RootRoundInput);
    if (plan.size === 0) break;
    rounds.push(plan);
    let count = 0;
    const promptRuns: Array<Promise<void>> = [];
    for (const [id, m] of plan) {
      const p = byId.get(id);
      if (!p) throw new EngineError(`root plan round ${round} names prompt "${id}", which is not among the ${prompts.length} prompts`);
      if (!Number.isInteger(m) || m < 0) throw new EngineError(`root plan round ${round} gives prompt "${id}" m = ${m}; m must be a non-negative integer`);
      if (m === 0) continue;
      const ctx = contextFor(p);
      const r = root(ctx.tree);
      if (r.predicted === undefined && vOf.has(id)) r.predicted = vOf.get(id);
      const first = nextSlot(r.children);
      count += m;
      progress.barePlanned += m;
      const runs = Array.from({ length: m }, (_, k) =>
        runTrajectory(ctx, { fromId: id, slot: first + k, origin: 'bare' }).then((res) => {
          finished(ctx, 'bare', res);
          return res;
        }),
      );
      promptRuns.push(
        Promise.all(runs).then((res) => {
          const rewards = results.get(id) ?? [];
          for (const x of res) if (x.reward !== undefined) rewards.push(x.reward);
          results.set(id, rewards);
          if (!expanded.has(id)) {
            expanded.add(id);
            expansions.push(expand(ctx));
          }
        }),
      );
    }
    emit({ kind: 'roots', round, prompts: plan.size, trajectories: count, progress: { ...progress } });
    await Promise.all(promptRuns);
  }
  await Promise.all(expansions);
  await topUp();

  options.signal?.removeEventListener('abort', onAbort);
  const cancelled = signal.aborted;
  emit({ kind: 'done', cancelled, progress: { ...progress } });
  return {
    trees: prompts.flatMap((p) => (trees.has(p.id) ? [trees.get(p.id)!] : [])),
    spend: ledger.spend(),
    rounds,
    progress,
    failures,
    cancelled,
    settings,
    ledger,
  };
}

function nextSlot(children: readonly string[]): number {
  let s = 0;
  for (const c of children) s = Math.max(s, Number(c.slice(c.lastIndexOf('/') + 1)) + 1);
  return s;
}

function defaultCandidates<S>(prompts: readonly Prompt[], env: Environment<S>, scorer: Scorer): RootCandidate[] {
  const v = scorer(prompts.map((prompt) => ({ prompt, turns: [] })));
  return prompts.map((p, i) => ({
    promptId: p.id,
    v: v[i],
    ...(knowsTruth(env) ? { p: env.trueSuccess(p, []) } : {}),
  }));
}
