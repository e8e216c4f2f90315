import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { buildBatch, containerOf, prepareExport, rendererFor, writeBatch, type ExportFormat } from '../export/index.ts';
import type { ChatTemplate, Tokenizer } from '../tokens/index.ts';
import type { Policy } from '../policy/types.ts';
import { estimatorFromConfig, parseTrainConfig, train, type LoopEvent, type TrainConfig } from '../train/index.ts';
import { weightsReadyFile, WeightsWaitAborted, type WeightsGate } from './weights-gate.ts';

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
 * The loop an external trainer runs against: train/loop.ts's loop with an external learner. Per step,
 * TRACE allocates and rolls out with the given policy (the trainer's current weights behind an
 * OpenAI-compatible server), updates the predictor on the step's trees, stores the step, writes one
 * batch file, then waits until the trainer says it has trained on that batch and pushed new weights.
 * No wait after the last step. The policy is not updated here: that is the trainer's job.
 */
export async function runRolloutService(options: RolloutServiceOptions): Promise<RolloutServiceResult> {
  const config = parseTrainConfig(options.config);
  const format = options.format ?? 'verl';
  const estimator = estimatorFromConfig(config);
  const batches: string[] = [];
  let render: ReturnType<typeof rendererFor> | undefined;
  const emit = (e: RolloutServiceEvent) => options.onEvent?.(e);
  const outcome = await train({
    out: options.out,
    config,
    clock: options.clock,
    signal: options.signal,
    onEvent: emit,
    external: {
      policy: options.policy,
      async handOff({ step, trees, parts, last }) {
        render ??= rendererFor(parts.env, [...parts.train, ...parts.test]);
        const text = { tokenizer: options.tokenizer, template: options.template, render };
        await prepareExport(trees, text);
        const batch = buildBatch(trees, { ...text, step, estimator, checkServerIds: options.checkServerIds });
        const file = batchFile(options.out, step, format);
        mkdirSync(dirname(file), { recursive: true });
        writeBatch(batch, format, file);
        batches.push(file);
        emit({ kind: 'batch', step, file, rows: batch.rows.length, leaves: batch.rows.length + batch.meta.skipped_leaves });
        if (last) return 'continue';
        emit({ kind: 'waiting', step, file: weightsReadyFile(options.gate.dir, step), ...(options.gate.url ? { url: `${options.gate.url}/weights` } : {}) });
        try {
          await options.gate.wait(step, options.signal);
        } catch (e) {
          if (e instanceof WeightsWaitAborted) return 'stopped';
          throw e;
        }
        emit({ kind: 'weights', step });
        return 'continue';
      },
    },
  });
  return { config, batches, status: outcome.status === 'stopped' ? 'stopped' : 'finished' };
}
