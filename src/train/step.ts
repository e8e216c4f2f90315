import { forestFromTrees, importanceWeighted, leafPrompts, type AdvantageEstimator, type LeafAdvantage } from '../advantage/index.ts';
import type { StepPlan, StepStart, Strategy } from '../allocate/index.ts';
import { emptySpend, type Spend } from '../budget/index.ts';
import { addServerLoad } from '../env/server-load.ts';
import type { PolicySample, UpdateMetrics } from '../policy/index.ts';
import { evaluateThenTrain, samplesFromTrees, type StepQuality } from '../predict/index.ts';
import { heldOutMetrics } from '../eval/index.ts';
import { meanBareCost, rootCandidates, type EngineEvent, type Scorer, type StepResult } from '../rollout/index.ts';
import type { StepRecord } from '../store/index.ts';
import { getNode, rewardedLeaves, root, turnsTo, type RolloutTree } from '../tree/index.ts';
import { createRng } from '../util/rng.ts';
import { drawPool } from './pool.ts';
import { samplesOf, stepAdvantages } from './policy-samples.ts';
import { memoryOf, multiTurnShare, nextState, type RunState } from './run-state.ts';
import type { Components } from './components.ts';
import { probeOutcomes } from './probe.ts';
import { stepRollouts, type StepRollouts } from './step-rollouts.ts';
import type { TrainConfig } from './config.ts';
import {
  allocationDetails,
  contrastMetrics,
  costMetrics,
  predictorMetrics,
  promptOutcomes,
  replayDetails,
  replayMetrics,
  serverLoadDetails,
  serverLoadMetrics,
  storedBins,
} from './step-metrics.ts';
import type { Prompt } from '../tree/types.ts';
import type { StepDetails, TreeRecord } from '../record/index.ts';

export interface StepContext {
  config: TrainConfig;
  parts: Components;
  strategy: Strategy;
  estimator: AdvantageEstimator;
  state: RunState;
  /** Milliseconds from an outside clock (library code reads no clock itself). */
  clock: () => number;
  signal?: AbortSignal;
  onEvent?: (e: EngineEvent | { kind: 'phase'; phase: string }) => void;
  /** How the run's steps roll out (its worker processes live across steps); absent: per step. */
  rollouts?: StepRollouts;
}

/** Wall-clock milliseconds of a step's phases, by metric key (time_allocate_ms, …). */
export type StepTimes = Record<string, number>;

/** What the collect phase produced: the pool and its rollout trees, with what they cost. */
export interface Collected {
  step: number;
  pool: Prompt[];
  rollout: StepResult;
  times: StepTimes;
  /** The strategy's plan for the step (its outcome is read in stepRecord). */
  plan: StepPlan;
}

/** What the learn phase produced. */
export interface Learned {
  predictor: { quality: StepQuality; loss?: number };
  /** The estimator's output over the step's trees (stored with them, whoever trains on them). */
  advantages: LeafAdvantage[];
  /** Absent when the policy is not trained here (the simulator's; an external trainer's). */
  policy?: UpdateMetrics;
  /** What the policy counted of the step's samples (tinker: prompt tokens, shared prefixes, its engine's cache hits). */
  engine?: Record<string, number>;
  times: StepTimes;
}

/** Runs `f` as a named phase: a `phase` event first, its wall time stored under `key`. */
async function timed<T>(ctx: StepContext, times: StepTimes, key: string, phase: string, f: () => T | Promise<T>): Promise<T> {
  ctx.onEvent?.({ kind: 'phase', phase });
  const t0 = ctx.clock();
  const out = await f();
  times[key] = ctx.clock() - t0;
  return out;
}

/**
 * Collect (TRACE-SPEC §3 steps 1–4): draw the step's pool, score its roots, then allocate and roll out
 * in the engine (root rounds, bare rollouts, per-prompt prefix expansion, leftover top-up).
 */
export async function collect(ctx: StepContext, step: number): Promise<Collected> {
  const { config, parts, clock } = ctx;
  const rng = createRng(config.seed).fork(`step/${step}`);
  const times: StepTimes = {};
  const pool = drawPool(parts.train, config.pool, step, config.seed);
  const scorer: Scorer = (hs) => parts.predictor.predict(hs);
  const candidates = await timed(ctx, times, 'time_allocate_ms', 'score roots', () => rootCandidates(pool, parts.env, scorer));
  const start: StepStart = {
    candidates,
    evidence: (id) => {
      const h = ctx.state.history[id];
      return h ? { successes: h[0], trials: h[1], ...(h[2] !== undefined ? { multiTurn: h[2] } : {}) } : undefined;
    },
    multiTurnShare: multiTurnShare(ctx.state.history),
    memory: memoryOf(ctx.state),
    freshOutcomes: (samples) =>
      timed(ctx, times, 'time_probe_ms', 'probe', () =>
        probeOutcomes({ prompts: pool, env: parts.env, policy: parts.policy, samples, rng: rng.fork('probe'), settings: config.engine, signal: ctx.signal }),
      ),
    run: { env: parts.env, policy: parts.policy },
  };
  const plan = ctx.strategy.perStep ? await ctx.strategy.perStep(start) : { strategy: ctx.strategy, candidates };
  // A run hands its steps one set of rollout workers; a step called on its own starts and ends its own.
  const rollouts = ctx.rollouts ?? stepRollouts(config, parts);
  const rollout = await timed(ctx, times, 'time_rollout_ms', 'rollouts', () =>
    rollouts.run({
      prompts: pool,
      env: parts.env,
      policy: parts.policy,
      rng: rng.fork('rollout'),
      strategy: plan.strategy,
      scorer,
      candidates: [...plan.candidates],
      settings: config.engine,
      clock,
      signal: ctx.signal,
      onEvent: ctx.onEvent,
      ...rootCostOf(ctx),
    }),
  ).finally(() => (ctx.rollouts ? undefined : rollouts.close()));
  // The root solve runs inside the engine, before the rollouts it plans: it is allocation time.
  times.time_allocate_ms += rollout.rootPlanMs;
  times.time_rollout_ms -= rollout.rootPlanMs;
  return { step, pool, rollout, times, plan };
}

/**
 * Learn, in process (TRACE-SPEC §3 steps 5–7): predictor targets, calibration and update; then, when
 * the policy is trainable here, advantages and the policy update. With an external trainer the policy
 * part is the trainer's (train/loop.ts hands it the batch instead).
 */
export async function learn(ctx: StepContext, collected: Collected): Promise<Learned> {
  const { pool, rollout } = collected;
  const times: StepTimes = {};
  const predictor = await timed(ctx, times, 'time_predictor_ms', 'predictor', () => updatePredictor(ctx, rollout.trees, pool));
  const { advantages, policy } = await timed(ctx, times, 'time_policy_ms', 'policy update', async () => {
    const advantages = stepAdvantages(ctx.estimator, rollout.trees);
    return { advantages, policy: await updatePolicy(ctx, advantages, rollout.trees, pool) };
  });
  // Taken after the update, before evaluation: the counts of this step's rollouts (and the last evaluation's).
  const engine = ctx.parts.policy.engineCounts?.();
  return { predictor, advantages, policy, times, ...(engine ? { engine } : {}) };
}

/** The price of a bare rollout in the strategy's unit, from the last step (none: the engine's stated prior). */
function rootCostOf(ctx: StepContext): { rootCost?: number } {
  const unit = ctx.strategy.unit;
  const last = ctx.state.bareCost;
  return (unit === 'turns' || unit === 'tokens') && last ? { rootCost: last[unit] } : {};
}

/** The stored record of a step (metrics in the registry's order, details, trees, checkpoints) and the next run state. */
export function stepRecord(
  ctx: StepContext,
  collected: Collected,
  learned: Learned,
  evaluation?: { metrics: Record<string, number>; times: StepTimes },
  externalPolicy?: string,
): StepRecord & { state: RunState; details: StepDetails; treeRecords: TreeRecord[] } {
  const { parts } = ctx;
  const { rollout } = collected;
  const trees = rollout.trees;
  const predictor = learned.predictor;
  const ended = collected.plan.end?.(promptOutcomes(trees, ctx.strategy.unit ?? 'trajectories'));
  const state: RunState = {
    ...nextState(ctx.state, trees, rollout.spend, ctx.strategy.unit !== undefined && ctx.strategy.unit !== 'trajectories'),
    ...ended?.memory,
  };
  // Read once per step: the server environment's counts since the last step's record, with what rollout workers' own sessions sent.
  const load = addServerLoad(parts.env.serverLoad?.(), rollout.partsLoad);
  const metrics: Record<string, number> = {
    ...contrastMetrics(trees),
    ...ended?.metrics,
    ...costMetrics(rollout.spend),
    ...replayMetrics(parts.env, rollout),
    ...parts.env.treeMetrics?.(trees),
    ...serverLoadMetrics(load),
    ...collected.plan.metrics,
    cum_trajectories: state.cumulative.bare + state.cumulative.continuation,
    cum_turns: state.cumulative.turns,
    cum_tokens: state.cumulative.tokens,
    ...predictorMetrics(predictor.quality),
    ...(predictor.loss !== undefined ? { pred_loss: predictor.loss } : {}),
    ...(learned.policy !== undefined ? { policy_loss: learned.policy.loss } : {}),
    ...learned.engine,
    ...evaluation?.metrics,
    ...collected.times,
    ...learned.times,
    ...evaluation?.times,
  };
  const details: StepDetails = {
    spend: rollout.spend,
    rounds: rollout.rounds.length,
    failures: rollout.failures,
    allocation: allocationDetails(trees),
    reliability: { root: storedBins(predictor.quality.root.reliability), prefix: storedBins(predictor.quality.prefix.reliability) },
    ...(externalPolicy !== undefined ? { policy: externalPolicy } : {}),
  };
  const replay = replayDetails(parts.env, rollout);
  if (replay) details.replay = replay;
  const servers = serverLoadDetails(load);
  if (servers) details.servers = servers;
  const checkpoints: Record<string, Uint8Array> = {
    predictor: parts.predictor.save(),
    state: new TextEncoder().encode(JSON.stringify(state)),
  };
  if (parts.trainable) checkpoints.policy = parts.trainable.save();
  const treeRecords = storedTrees(trees, rollout.rendered, learned.advantages, { estimator: ctx.estimator.name, scale: ctx.config.advantageScale });
  return { step: collected.step, metrics, details, trees, treeRecords, checkpoints, state };
}

/** Each tree's rendered prompt and its leaves' advantages (the estimator lists leaves tree by tree, in tree order). */
function storedTrees(
  trees: readonly RolloutTree[],
  rendered: ReadonlyMap<string, string>,
  advantages: readonly LeafAdvantage[],
  estimator: Omit<TreeRecord['advantages'], 'leaves'>,
): TreeRecord[] {
  const leavesOf = new Map<string, LeafAdvantage[]>(trees.map((t) => [t.promptId, []]));
  const promptOf = leafPrompts(advantages, trees);
  for (const adv of advantages) leavesOf.get(promptOf.get(adv.id)!)!.push(adv);
  return trees.map((t) => ({
    promptId: t.promptId,
    rendered: rendered.get(t.promptId) ?? t.prompt,
    advantages: { ...estimator, leaves: leavesOf.get(t.promptId)! },
  }));
}

/** Steps 5–6: bottom-up targets; calibration measured on them first (held out), then the update. */
async function updatePredictor(ctx: StepContext, trees: readonly RolloutTree[], pool: readonly Prompt[]) {
  const samples = samplesFromTrees(trees, pool, { leaves: false });
  const { quality, training } = await evaluateThenTrain(ctx.parts.predictor, samples);
  return { quality, loss: training.loss };
}

/** Step 7: tree-aware advantages per turn, then the clipped-surrogate update of the policy. */
function updatePolicy(ctx: StepContext, advantages: readonly LeafAdvantage[], trees: readonly RolloutTree[], pool: readonly Prompt[]) {
  const trainable = ctx.parts.trainable;
  // Only trainable kinds (embedded, tiny-lm) have update settings; the registry gives no trainable otherwise.
  if (!trainable || !('clip' in ctx.config.policy)) return undefined;
  const { learningRate, clip, epochs, normalise, sharedTurns } = ctx.config.policy;
  return trainable.update(samplesOf(advantages, trees, pool, sharedTurns), { learningRate, clip, epochs, normalise });
}

/** Evaluation steps: the first, every `eval.every`-th, and the last. */
export function shouldEvaluate(step: number, config: TrainConfig): boolean {
  return (step + 1) % config.eval.every === 0 || step === config.steps - 1 || step === 0;
}

/** The held-out evaluation of a step, by the evaluation harness (src/eval/held-out.ts: what each environment kind logs). */
export function evaluate(ctx: Pick<StepContext, 'config' | 'parts' | 'signal'>, step: number): Promise<Record<string, number>> {
  const { config, parts } = ctx;
  return heldOutMetrics({
    kind: config.env.kind,
    env: parts.env,
    policy: parts.policy,
    test: parts.test,
    questions: config.eval.questions,
    samples: config.eval.samples,
    seed: config.seed,
    step,
    engine: config.engine,
    signal: ctx.signal,
    ...(parts.truth ? { truth: parts.truth, train: parts.train } : {}),
  });
}
