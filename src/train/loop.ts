import { strategyFromConfig } from '../allocate/index.ts';
import { MetricsLog, RunStore } from '../store/index.ts';
import type { Policy, RunOutcome } from '../policy/types.ts';
import { SETUP_REFUSALS_NOTE, type TreeRecord } from '../record/index.ts';
import type { RolloutTree } from '../tree/index.ts';
import { buildComponents, estimatorFromConfig, type Components } from './components.ts';
import { stepRollouts, type StepRollouts } from './step-rollouts.ts';
import { CONFIG_REVISION, parseTrainConfig, storedTrainConfig, type TrainConfig } from './config.ts';
import { collect, evaluate, learn, shouldEvaluate, stepRecord, type StepContext } from './step.ts';
import { initialState, type RunState } from './run-state.ts';
import { UserError } from '../util/user-error.ts';

export type LoopEvent =
  Parameters<NonNullable<StepContext['onEvent']>>[0] | { kind: 'step'; step: number; metrics: Record<string, number> } | { kind: 'resumed'; from: number };

/**
 * The second way to learn: the policy is trained elsewhere. The loop collects with the trainer's
 * policy, updates the predictor, stores the step, then hands the step to the trainer and waits until
 * it has trained on it (src/service/rollout-service.ts: a batch file and a weights gate).
 */
export interface ExternalTrainer {
  /** The policy being trained elsewhere, e.g. an OpenAIPolicy on the trainer's inference servers. */
  policy: Policy;
  /**
   * Called with a step's rollout trees before anything is learned or stored; throwing ends the run
   * there, without the step (the steps before it, and whatever the trainer was handed, are kept).
   * The rollout service refuses a step whose every trajectory failed this way.
   */
  review?(step: { step: number; trees: readonly RolloutTree[] }): void;
  /**
   * Called once the step is stored. Resolves 'continue' when the trainer has taken the step (for all
   * but the last step: trained on it and loaded new weights), 'stopped' if the wait was cancelled.
   */
  handOff(step: {
    step: number;
    trees: readonly RolloutTree[];
    treeRecords: readonly TreeRecord[];
    last: boolean;
    /** Keeps what the trainer acknowledged in the run (RunStore.note), at once: a resumed run reads it. */
    note(key: string, value: unknown): void;
  }): Promise<'continue' | 'stopped'>;
}

export interface TrainOptions {
  /** The run folder: created for a new run, reopened with `resume`. */
  out: string;
  /** New runs only: the configuration (validated here). */
  config?: unknown;
  /** Continue the run in `out` from its last completed step. */
  resume?: boolean;
  /** Resume only: a new total number of steps (the one setting a resumed run may change; stored in the run). */
  steps?: number;
  /** Resume only: the engine's address now (policy.baseUrl: an engine that moved keeps the run's saved states; stored in the run). */
  baseUrl?: string;
  /** Learn through an external trainer instead of updating the policy in process (no evaluation here then: the trainer owns it). */
  external?: ExternalTrainer;
  /** Called with a step's rollout trees before anything is learned or stored (as ExternalTrainer.review); throwing ends the run there, without the step. */
  review?(step: { step: number; trees: readonly RolloutTree[] }): void;
  /** New runs only: notes stored with the run from its creation (RunStore.note), e.g. how its text was tokenised. */
  notes?: Record<string, unknown>;
  clock: () => number;
  /** Milliseconds since the epoch, for the wall time of TensorBoard's events (default: none, 0). */
  wallClock?: () => number;
  signal?: AbortSignal;
  onEvent?: (e: LoopEvent) => void;
}

export interface TrainOutcome {
  dir: string;
  config: TrainConfig;
  /** Steps completed by this call. */
  completed: number;
  status: 'finished' | 'stopped' | 'already-finished';
}

/** Raised when a run cannot be started or resumed as asked. */
export class TrainError extends UserError {
  override name = 'TrainError';
}

/**
 * Runs (or resumes) a training run: per step, collect (allocate and roll out), learn (predictor, then
 * the policy in process — or hand the step to an external trainer and wait), evaluate (in process
 * only, on its evaluation steps), and store the step in one transaction with the checkpoints that
 * resume it. A resumed run restores the policy, the predictor and the run state of its last completed
 * step and continues, giving the same results as an uninterrupted run (every random stream is derived
 * from the seed and the step number, never from how many steps one process ran).
 */
export async function train(options: TrainOptions): Promise<TrainOutcome> {
  const opened = openRun(options);
  if ('status' in opened) return opened;
  const { store, config } = opened;
  let completed = 0;
  let parts: Components | undefined;
  let rollouts: StepRollouts | undefined;
  // How the run ended, told to a policy whose engine keeps a session (a Tinker engine's sessions/{id}/finish).
  let outcome: RunOutcome = 'errored';
  try {
    const external = options.external;
    // With an external trainer the rollouts come from its policy and nothing here trains the policy.
    parts = await buildComponents(config, external ? { policy: external.policy } : {});
    if (parts.setupRefusals) store.writeNote(SETUP_REFUSALS_NOTE, parts.setupRefusals);
    const strategy = strategyFromConfig(config.strategy);
    // A root-only strategy restores no prefix: a forkable server need keep no state for it.
    if (!strategy.prefixes) parts.env.neverRestores?.();
    const estimator = estimatorFromConfig(config);
    rollouts = stepRollouts(config, parts);
    const last = store.lastStep();
    let state = last >= 0 ? restoreStep(store, last, parts, options.out) : initialState();
    const metricsLog = new MetricsLog(options.out);
    if (last >= 0) metricsLog.reset(store.steps(), options.wallClock?.());
    if (last >= 0) options.onEvent?.({ kind: 'resumed', from: last + 1 });
    const stopped = () => {
      outcome = 'interrupted';
      return { dir: options.out, config, completed, status: 'stopped' as const };
    };
    for (let step = last + 1; step < config.steps; step++) {
      // With the embedded policy a step never waits on I/O, so without this turn of the event loop
      // signal handlers (Ctrl-C) and timers would not run until the whole run had finished.
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (options.signal?.aborted) return stopped();
      const ctx: StepContext = { config, parts, strategy, estimator, state, clock: options.clock, signal: options.signal, onEvent: options.onEvent, rollouts };
      const t0 = options.clock();
      const collected = await collect(ctx, step);
      if (collected.rollout.cancelled) return stopped();
      options.review?.({ step, trees: collected.rollout.trees });
      external?.review?.({ step, trees: collected.rollout.trees });
      const learned = await learn(ctx, collected);
      const evaluation = !external && shouldEvaluate(step, config) ? await evaluateTimed(ctx, step) : undefined;
      const record = stepRecord(ctx, collected, learned, evaluation, external?.policy.name);
      record.metrics.time_step_ms = options.clock() - t0;
      store.writeStep(record);
      metricsLog.append(step, record.metrics, options.wallClock?.());
      state = record.state;
      completed++;
      options.onEvent?.({ kind: 'step', step, metrics: record.metrics });
      const note = (key: string, value: unknown) => store.writeNote(key, value);
      if (
        external &&
        (await external.handOff({ step, trees: record.trees, treeRecords: record.treeRecords, last: step === config.steps - 1, note })) === 'stopped'
      )
        return stopped();
    }
    store.markFinished();
    outcome = 'success';
    return { dir: options.out, config, completed, status: 'finished' };
  } catch (e) {
    // A new run that failed before its first step (a bad model, an unreachable server…) leaves nothing behind.
    if (!options.resume) store.discard();
    throw e;
  } finally {
    await rollouts?.close();
    store.close();
    // The run's own policy (not an external trainer's) is freed: a process can run many trains.
    await parts?.trainable?.dispose?.(outcome === 'errored' && options.signal?.aborted ? 'interrupted' : outcome);
    parts?.predictor.dispose?.();
  }
}

/**
 * The run's store and configuration: a new run is created (a run fed to an external trainer is a
 * rollout run, which `train --resume` refuses: its policy is elsewhere); a resumed one keeps its stored
 * configuration, with a new total of steps when `options.steps` gives one. A finished run is
 * closed again and reported as such.
 */
function openRun(options: TrainOptions): { store: RunStore; config: TrainConfig } | TrainOutcome {
  if (!options.resume) {
    const config = parseTrainConfig(options.config ?? {});
    const kind = options.external ? 'rollout' : 'train';
    return {
      store: RunStore.create(options.out, config, { kind, configRevision: CONFIG_REVISION, ...(options.notes ? { notes: options.notes } : {}) }),
      config,
    };
  }
  const store = RunStore.open(options.out);
  let config: TrainConfig;
  try {
    // A rollout run resumes only with its external trainer (trace-rl rollout --resume), a train run only without one.
    if (store.kind() !== 'train' && !options.external)
      throw new TrainError(
        `${options.out} was made by trace-rl ${store.kind()} (batches for an external trainer), not by train; train cannot resume it: continue it with trace-rl rollout --resume ${options.out}, or start a train run with another --out`,
      );
    if (store.kind() === 'train' && options.external)
      throw new TrainError(
        `${options.out} was made by trace-rl train, which trains its own policy; rollout cannot resume it: start a rollout run with another --out`,
      );
    config = storedTrainConfig(store);
    const policy = config.policy as { baseUrl?: unknown };
    if (options.baseUrl !== undefined && options.baseUrl !== policy.baseUrl) {
      if (typeof policy.baseUrl !== 'string')
        throw new TrainError(`--base-url: ${options.out}'s policy.kind ${config.policy.kind} has no engine address to change`);
      config = parseTrainConfig({ ...config, policy: { ...config.policy, baseUrl: options.baseUrl } });
      store.updateConfig(config);
    }
    if (options.steps !== undefined && options.steps !== config.steps) {
      if (options.steps <= store.lastStep())
        throw new TrainError(`--steps ${options.steps}: ${options.out} has already completed ${store.lastStep() + 1} steps; give more steps than that`);
      config = { ...config, steps: options.steps };
      store.updateConfig(config);
      if (store.status() === 'finished') store.markRunning();
    }
  } catch (e) {
    store.close();
    throw e;
  }
  if (store.status() === 'finished') {
    store.close();
    return { dir: options.out, config, completed: 0, status: 'already-finished' };
  }
  return { store, config };
}

/** Loads the predictor, the policy and the run state stored with step `last`, for a resumed run. */
function restoreStep(store: RunStore, last: number, parts: Components, out: string): RunState {
  const ck = store.checkpoints(last);
  if (!ck.state || !ck.predictor) throw new TrainError(`${out}: step ${last} has no checkpoint to resume from`);
  parts.predictor.load(ck.predictor);
  if (parts.trainable) {
    if (!ck.policy) throw new TrainError(`${out}: step ${last} has no policy checkpoint`);
    parts.trainable.load(ck.policy);
  }
  return JSON.parse(new TextDecoder().decode(ck.state)) as RunState;
}

async function evaluateTimed(ctx: StepContext, step: number): Promise<{ metrics: Record<string, number>; times: Record<string, number> }> {
  ctx.onEvent?.({ kind: 'phase', phase: 'evaluation' });
  const t0 = ctx.clock();
  const metrics = await evaluate(ctx, step);
  return { metrics, times: { time_eval_ms: ctx.clock() - t0 } };
}
