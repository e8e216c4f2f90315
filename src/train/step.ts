import type { AdvantageEstimator } from '../advantage/index.ts';
import { forestFromTrees } from '../advantage/index.ts';
import type { Strategy } from '../allocate/index.ts';
import { emptySpend, type Spend } from '../budget/index.ts';
import type { PolicySample, UpdateMetrics } from '../policy/index.ts';
import { evaluateThenTrain, samplesFromTrees, type StepQuality } from '../predict/index.ts';
import { greedyAccuracy, rootCandidates, runStep, type EngineEvent, type Scorer, type StepResult } from '../rollout/index.ts';
import type { StepRecord } from '../store/index.ts';
import { getNode, rewardedLeaves, root, turnsTo, type RolloutTree } from '../tree/index.ts';
import { createRng, shuffled } from '../util/rng.ts';
import type { Components } from './components.ts';
import type { TrainConfig } from './config.ts';
import { allocationDetails, contrastMetrics, costMetrics, predictorMetrics, storedBins } from './step-metrics.ts';
import type { Prompt } from '../tree/types.ts';

/** What carries over from one step to the next besides the model checkpoints (stored as JSON). */
export interface RunState {
  /** Per-prompt outcomes of earlier bare rollouts: [successes, trials] (Knapsack-RL's estimate). */
  history: Record<string, [number, number]>;
  /** Cost since step 0. */
  cumulative: Spend;
}

export function initialState(): RunState {
  return { history: {}, cumulative: emptySpend() };
}

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
}

/** Wall-clock milliseconds of a step's phases, by metric key (time_allocate_ms, …). */
export type StepTimes = Record<string, number>;

/** What the collect phase produced: the pool and its rollout trees, with what they cost. */
export interface Collected {
  step: number;
  pool: Prompt[];
  rollout: StepResult;
  times: StepTimes;
}

/** What the learn phase produced. */
export interface Learned {
  predictor: { quality: StepQuality; loss?: number };
  /** Absent when the policy is not trained here (the simulator's; an external trainer's). */
  policy?: UpdateMetrics;
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
  const history = (id: string) => {
    const h = ctx.state.history[id];
    return h ? { successes: h[0], trials: h[1] } : undefined;
  };
  const candidates = await timed(ctx, times, 'time_allocate_ms', 'score roots', () => rootCandidates(pool, parts.env, scorer, history));
  const rollout = await timed(ctx, times, 'time_rollout_ms', 'rollouts', () =>
    runStep({ prompts: pool, env: parts.env, policy: parts.policy, rng: rng.fork('rollout'), strategy: ctx.strategy, scorer, candidates, settings: config.engine, clock, signal: ctx.signal, onEvent: ctx.onEvent }),
  );
  // The root solve runs inside the engine, before the rollouts it plans: it is allocation time.
  times.time_allocate_ms += rollout.rootPlanMs;
  times.time_rollout_ms -= rollout.rootPlanMs;
  return { step, pool, rollout, times };
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
  const policy = await timed(ctx, times, 'time_policy_ms', 'policy update', () => updatePolicy(ctx, rollout.trees, pool));
  return { predictor, policy, times };
}

/** The stored record of a step (metrics in the registry's order, details, trees, checkpoints) and the next run state. */
export function stepRecord(ctx: StepContext, collected: Collected, learned: Learned, evaluation?: { accuracy: number; times: StepTimes }): StepRecord & { state: RunState } {
  const { parts } = ctx;
  const { rollout } = collected;
  const trees = rollout.trees;
  const predictor = learned.predictor;
  const state = nextState(ctx.state, trees, rollout.spend);
  const metrics: Record<string, number> = {
    ...contrastMetrics(trees),
    ...costMetrics(rollout.spend),
    cum_trajectories: state.cumulative.bare + state.cumulative.continuation,
    cum_turns: state.cumulative.turns,
    cum_tokens: state.cumulative.tokens,
    ...predictorMetrics(predictor.quality),
    ...(predictor.loss !== undefined ? { pred_loss: predictor.loss } : {}),
    ...(learned.policy !== undefined ? { policy_loss: learned.policy.loss } : {}),
    ...(evaluation !== undefined ? { test_accuracy: evaluation.accuracy } : {}),
    ...collected.times,
    ...learned.times,
    ...evaluation?.times,
  };
  const details = {
    spend: rollout.spend,
    rounds: rollout.rounds.length,
    failures: rollout.failures,
    allocation: allocationDetails(trees),
    reliability: { root: storedBins(predictor.quality.root.reliability), prefix: storedBins(predictor.quality.prefix.reliability) },
  };
  const checkpoints: Record<string, Uint8Array> = {
    predictor: parts.predictor.save(),
    state: new TextEncoder().encode(JSON.stringify(state)),
  };
  if (parts.trainable) checkpoints.policy = parts.trainable.save();
  return { step: collected.step, metrics, details, trees, checkpoints, state };
}

/**
 * The step's candidate pool: the training prompts in a seeded order that is reshuffled every epoch,
 * `size` at a time, so every prompt is seen once per epoch and step s's pool depends only on (seed, s).
 */
export function drawPool(train: readonly Prompt[], size: number, step: number, seed: number): Prompt[] {
  const n = train.length;
  const k = Math.min(size, n);
  const out: Prompt[] = [];
  const seen = new Set<string>();
  const orders = new Map<number, Prompt[]>();
  // Positions [step·k, step·k + k) of the endless sequence of epoch shuffles; a pool that straddles two
  // epochs skips prompts it already holds and reads on, so a pool never repeats a prompt.
  for (let flat = step * k; out.length < k; flat++) {
    const epoch = Math.floor(flat / n);
    let order = orders.get(epoch);
    if (!order) orders.set(epoch, (order = shuffled(train, createRng(seed).fork(`epoch/${epoch}`))));
    const p = order[flat % n];
    if (seen.has(p.id)) continue;
    seen.add(p.id);
    out.push(p);
  }
  return out;
}

/** Steps 5–6: bottom-up targets; calibration measured on them first (held out), then the update. */
async function updatePredictor(ctx: StepContext, trees: readonly RolloutTree[], pool: readonly Prompt[]) {
  const samples = samplesFromTrees(trees, pool, { leaves: false });
  const { quality, training } = await evaluateThenTrain(ctx.parts.predictor, samples);
  return { quality, loss: training.loss };
}

/** Step 7: tree-aware advantages per turn, then the clipped-surrogate update of the policy. */
function updatePolicy(ctx: StepContext, trees: readonly RolloutTree[], pool: readonly Prompt[]) {
  const trainable = ctx.parts.trainable;
  if (!trainable) return undefined;
  const prompts = new Map(pool.map((p) => [p.id, p]));
  const byPrompt = new Map(trees.map((t) => [t.promptId, t]));
  const samples: PolicySample[] = [];
  for (const adv of ctx.estimator.estimate(forestFromTrees(trees))) {
    const promptId = adv.path[0].split('/')[0];
    const tree = byPrompt.get(promptId)!;
    samples.push({ prompt: prompts.get(promptId)!, turns: turnsTo(tree, adv.id), advantages: adv.turns });
  }
  const { learningRate, clip, epochs } = ctx.config.policy;
  return trainable.update(samples, { learningRate, clip, epochs });
}

/** Evaluation steps: the first, every `eval.every`-th, and the last. */
export function shouldEvaluate(step: number, config: TrainConfig): boolean {
  return (step + 1) % config.eval.every === 0 || step === config.steps - 1 || step === 0;
}

/** Greedy success rate on the first `eval.questions` test prompts (one rollout each, no budget cap). */
export async function evaluate(ctx: Pick<StepContext, 'config' | 'parts' | 'signal'>, step: number): Promise<number> {
  return greedyAccuracy({
    env: ctx.parts.env,
    policy: ctx.parts.policy,
    prompts: ctx.parts.test.slice(0, ctx.config.eval.questions),
    rng: createRng(ctx.config.seed).fork(`eval/${step}`),
    settings: ctx.config.engine,
    signal: ctx.signal,
  });
}

function nextState(prev: RunState, trees: readonly RolloutTree[], spend: Spend): RunState {
  const history = { ...prev.history };
  for (const tree of trees) {
    let s = 0;
    let n = 0;
    for (const id of root(tree).children) {
      if (getNode(tree, id).origin !== 'bare') continue;
      for (const leaf of rewardedLeaves(tree, id)) {
        if (leaf.origin !== 'bare') continue;
        s += leaf.reward!;
        n++;
      }
    }
    if (n === 0) continue;
    const [hs, hn] = history[tree.promptId] ?? [0, 0];
    history[tree.promptId] = [hs + s, hn + n];
  }
  const c = prev.cumulative;
  const cumulative: Spend = {
    bare: c.bare + spend.bare,
    continuation: c.continuation + spend.continuation,
    turns: c.turns + spend.turns,
    tokens: c.tokens + spend.tokens,
    toolCalls: c.toolCalls + spend.toolCalls,
  };
  return { history, cumulative };
}
