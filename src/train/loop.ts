import { createEstimator } from '../advantage/index.ts';
import { strategyFromConfig } from '../allocate/index.ts';
import { RunStore } from '../store/index.ts';
import { buildComponents } from './components.ts';
import { parseTrainConfig, type TrainConfig } from './config.ts';
import { initialState, trainStep, type RunState, type StepContext } from './step.ts';
import { UserError } from '../util/user-error.ts';

export type LoopEvent = Parameters<NonNullable<StepContext['onEvent']>>[0] | { kind: 'step'; step: number; metrics: Record<string, number> } | { kind: 'resumed'; from: number };

export interface TrainOptions {
  /** The run folder: created for a new run, reopened with `resume`. */
  out: string;
  /** New runs only: the configuration (validated here). */
  config?: unknown;
  /** Continue the run in `out` from its last completed step. */
  resume?: boolean;
  clock: () => number;
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
 * Runs (or resumes) a training run. Each step is stored in one transaction with the checkpoints that
 * resume it; a resumed run restores the policy, the predictor and the run state of its last completed
 * step and continues, giving the same results as an uninterrupted run (every random stream is derived
 * from the seed and the step number, never from how many steps one process ran).
 */
export async function train(options: TrainOptions): Promise<TrainOutcome> {
  let store: RunStore;
  let config: TrainConfig;
  if (options.resume) {
    store = RunStore.open(options.out);
    config = parseTrainConfig(store.config(), { stored: true });
    if (store.status() === 'finished') {
      store.close();
      return { dir: options.out, config, completed: 0, status: 'already-finished' };
    }
  } else {
    config = parseTrainConfig(options.config ?? {});
    store = RunStore.create(options.out, config);
  }
  try {
    const parts = await buildComponents(config);
    const strategy = strategyFromConfig(config.strategy);
    const estimator = createEstimator(config.estimator);
    let state: RunState = initialState();
    const last = store.lastStep();
    if (last >= 0) {
      const ck = store.checkpoints(last);
      if (!ck.state || !ck.predictor) throw new TrainError(`${options.out}: step ${last} has no checkpoint to resume from`);
      parts.predictor.load(ck.predictor);
      if (parts.trainable) {
        if (!ck.policy) throw new TrainError(`${options.out}: step ${last} has no policy checkpoint`);
        parts.trainable.load(ck.policy);
      }
      state = JSON.parse(new TextDecoder().decode(ck.state)) as RunState;
      options.onEvent?.({ kind: 'resumed', from: last + 1 });
    }
    let completed = 0;
    for (let step = last + 1; step < config.steps; step++) {
      // With the embedded policy a step never waits on I/O, so without this turn of the event loop
      // signal handlers (Ctrl-C) and timers would not run until the whole run had finished.
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (options.signal?.aborted) return { dir: options.out, config, completed, status: 'stopped' };
      const ctx: StepContext = { config, parts, strategy, estimator, state, clock: options.clock, signal: options.signal, onEvent: options.onEvent };
      const result = await trainStep(ctx, step);
      if (result.cancelled) return { dir: options.out, config, completed, status: 'stopped' };
      store.writeStep(result);
      state = result.state;
      completed++;
      options.onEvent?.({ kind: 'step', step, metrics: result.metrics });
    }
    store.markFinished();
    return { dir: options.out, config, completed, status: 'finished' };
  } finally {
    store.close();
  }
}
