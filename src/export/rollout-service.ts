import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createEstimator } from '../advantage/index.ts';
import { strategyFromConfig } from '../allocate/index.ts';
import type { Policy } from '../policy/types.ts';
import { RunStore } from '../store/index.ts';
import { buildComponents, initialState, parseTrainConfig, trainStep, type Components, type LoopEvent, type RunState, type TrainConfig } from '../train/index.ts';
import { rendererFor } from './run-export.ts';
import type { ChatTemplate, Tokenizer } from '../tokens/index.ts';
import { buildBatch, prepareExport } from './rows.ts';
import { weightsReadyFile, WeightsWaitAborted, type WeightsGate } from './weights-gate.ts';
import { containerOf, writeBatch, type ExportFormat } from './write.ts';

export type RolloutServiceEvent =
  | LoopEvent
  | { kind: 'batch'; step: number; file: string; rows: number; leaves: number }
  | { kind: 'waiting'; step: number; file: string; url?: string }
  | { kind: 'weights'; step: number };

export interface RolloutServiceOptions {
  /** New run folder: `run.sqlite` (steps and trees, readable by `trace-rl export` and `report`) and `batches/`. */
  out: string;
  /** A training configuration (env, pool, strategy and budget, predictor, estimator, engine, steps, seed). */
  config: unknown;
  /** The policy being trained elsewhere, e.g. an OpenAIPolicy on the trainer's inference servers. */
  policy: Policy;
  /** Form of each batch file (default verl Parquet). */
  format?: ExportFormat;
  tokenizer?: Tokenizer;
  /** The chat template the policy framed turns with (pass the policy's, so batches hold the ids the server saw). */
  template?: ChatTemplate;
  /** Checks server ids against `tokenizer` (default true). */
  checkServerIds?: boolean;
  /** Where the trainer's "weights updated" signal arrives. */
  gate: WeightsGate;
  clock: () => number;
  signal?: AbortSignal;
  onEvent?: (e: RolloutServiceEvent) => void;
}

export interface RolloutServiceResult {
  config: TrainConfig;
  /** Batch files written, by step. */
  batches: string[];
  status: 'finished' | 'stopped';
}

/** `batches/step-<N>.parquet` (or .jsonl for the JSONL forms). */
export function batchFile(out: string, step: number, format: ExportFormat): string {
  return join(out, 'batches', `step-${step}.${containerOf(format, '') === 'jsonl' ? 'jsonl' : 'parquet'}`);
}

/**
 * The loop an external trainer runs against: per step, TRACE allocates and rolls out with the given
 * policy (the trainer's current weights behind an OpenAI-compatible server), updates the predictor on
 * the step's trees, stores the step, writes one batch file, then waits until the trainer says it has
 * trained on that batch and pushed new weights. No wait after the last step. The policy is not updated
 * here: that is the trainer's job.
 */
export async function runRolloutService(options: RolloutServiceOptions): Promise<RolloutServiceResult> {
  const config = parseTrainConfig(options.config);
  const format = options.format ?? 'verl';
  const store = RunStore.create(options.out, config, { kind: 'rollout' });
  const batches: string[] = [];
  let batchDir = false;
  try {
    mkdirSync(join(options.out, 'batches'));
    batchDir = true;
    const built = await buildComponents(config);
    // The external trainer owns the policy and its evaluation: no embedded update, no test split here.
    const parts: Components = { ...built, policy: options.policy, trainable: undefined, test: [] };
    const render = rendererFor(built.env, [...built.train, ...built.test]);
    const strategy = strategyFromConfig(config.strategy);
    const estimator = createEstimator(config.estimator);
    let state: RunState = initialState();
    for (let step = 0; step < config.steps; step++) {
      if (options.signal?.aborted) return { config, batches, status: 'stopped' };
      const result = await trainStep({ config, parts, strategy, estimator, state, clock: options.clock, signal: options.signal, onEvent: options.onEvent }, step);
      if (result.cancelled) return { config, batches, status: 'stopped' };
      // With no test split the step's evaluation measures nothing; drop it rather than store a 0.
      delete result.metrics.test_accuracy;
      result.details.policy = options.policy.name;
      store.writeStep(result);
      state = result.state;
      options.onEvent?.({ kind: 'step', step, metrics: result.metrics });

      const text = { tokenizer: options.tokenizer, template: options.template, render };
      await prepareExport(result.trees, text);
      const batch = buildBatch(result.trees, { ...text, step, estimator, checkServerIds: options.checkServerIds });
      const file = batchFile(options.out, step, format);
      writeBatch(batch, format, file);
      batches.push(file);
      options.onEvent?.({ kind: 'batch', step, file, rows: batch.rows.length, leaves: batch.rows.length + batch.meta.skipped_leaves });
      if (step === config.steps - 1) break;
      options.onEvent?.({ kind: 'waiting', step, file: weightsReadyFile(options.gate.dir, step), ...(options.gate.url ? { url: `${options.gate.url}/weights` } : {}) });
      try {
        await options.gate.wait(step, options.signal);
      } catch (e) {
        if (e instanceof WeightsWaitAborted) return { config, batches, status: 'stopped' };
        throw e;
      }
      options.onEvent?.({ kind: 'weights', step });
    }
    store.markFinished();
    return { config, batches, status: 'finished' };
  } catch (e) {
    // A start that failed before its first step leaves nothing behind.
    if (store.lastStep() < 0) {
      if (batchDir) rmSync(join(options.out, 'batches'), { recursive: true, force: true });
      store.discard();
    }
    throw e;
  } finally {
    store.close();
  }
}
