import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { buildBatch, containerOf, logprobWarning, prepareExport, storedText, writeBatch, type BatchMeta, type ExportFormat } from '../export/index.ts';
import type { ChatTemplate, Tokenizer } from '../tokens/index.ts';
import type { Policy } from '../policy/types.ts';
import { OpenAIPolicy } from '../policy/openai/index.ts';
import { failureCauses, summariseFailures, type FailureSummary } from '../rollout/index.ts';
import { writeFileAtomic } from '../store/atomic-write.ts';
import { parseTrainConfig, train, type LoopEvent, type TrainConfig } from '../train/index.ts';
import { weightsReadyFile, WeightsWaitAborted, type WeightsGate } from './weights-gate.ts';
import type { AtroposClient, AtroposPush } from './atropos-client.ts';
import { atroposGroups, type AtroposLayout } from './atropos-groups.ts';

export type RolloutServiceEvent =
  | LoopEvent
  | { kind: 'batch'; step: number; file: string; rows: number; leaves: number; status: BatchMeta['status']; failures: FailureSummary; warning?: string }
  | { kind: 'waiting'; step: number; file: string; url?: string }
  | ({ kind: 'atropos'; step: number; url: string } & AtroposPush)
  | { kind: 'taken'; step: number; outstanding: number }
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
  /** Where the trainer's "weights updated" signal arrives (required unless `atropos` is given). */
  gate?: WeightsGate;
  /**
   * Push every step's groups to an Atropos trajectory API as well as writing its batch file. The
   * trainer there loads its own new weights, so between steps the service waits until the trainer
   * has taken the queued sequences (AtroposClient.waitUntilTaken) instead of waiting at `gate`.
   */
  atropos?: { client: AtroposClient; layout: AtroposLayout };
  /** The policy's servers, named when a step fails (default: an OpenAIPolicy's base URLs). */
  servers?: readonly string[];
  clock: () => number;
  /** Milliseconds since the epoch, for TensorBoard's wall time (train/loop.ts). */
  wallClock?: () => number;
  signal?: AbortSignal;
  onEvent?: (e: RolloutServiceEvent) => void;
}

export interface RolloutServiceResult {
  config: TrainConfig;
  /** Batch files written, by step. */
  batches: string[];
  status: 'finished' | 'stopped';
}

/**
 * Every trajectory of a step failed after the engine's retries (the server is down, answers errors or
 * garbage, or stalls past engine.timeoutMs): the run ends before the step is stored, and no batch is
 * written for it. Earlier steps and their batches are kept.
 */
export class RolloutStepFailed extends Error {
  override name = 'RolloutStepFailed';
  constructor(
    readonly step: number,
    readonly failures: FailureSummary,
    readonly servers: readonly string[],
  ) {
    const where = servers.length ? ` (server ${servers.join(', ')})` : '';
    super(
      `step ${step}: all ${failures.trajectories} trajectories ended in an error after the engine's retries${where}: ${failureCauses(failures)}; no batch was written for this step`,
    );
  }
}

/** `batches/step-<N>.meta.json`: the batch's metadata (status complete or partial, failed and skipped leaves, rows). */
export function batchMetaFile(out: string, step: number): string {
  return join(out, 'batches', `step-${step}.meta.json`);
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
  const { gate, atropos } = options;
  if (!gate && !atropos) throw new RangeError('runRolloutService: give a weights gate, or an Atropos client');
  if (atropos && !atropos.client.registered) {
    try {
      await atropos.client.register(options.signal);
    } catch (e) {
      if (options.signal?.aborted) return { config, batches: [], status: 'stopped' };
      throw e;
    }
  }
  const batches: string[] = [];
  const emit = (e: RolloutServiceEvent) => options.onEvent?.(e);
  const servers = options.servers ?? (options.policy instanceof OpenAIPolicy ? options.policy.router.urls : []);
  const failuresOf = new Map<number, FailureSummary>();
  const outcome = await train({
    out: options.out,
    config,
    clock: options.clock,
    ...(options.wallClock ? { wallClock: options.wallClock } : {}),
    signal: options.signal,
    onEvent: emit,
    external: {
      policy: options.policy,
      review({ step, trees }) {
        const failures = summariseFailures(trees);
        if (failures.trajectories > 0 && failures.failed === failures.trajectories) throw new RolloutStepFailed(step, failures, servers);
        failuresOf.set(step, failures);
      },
      async handOff({ step, trees, treeRecords, last }) {
        const { render, estimator } = storedText(trees, treeRecords, `${options.out} step ${step}`);
        const text = { tokenizer: options.tokenizer, template: options.template, render };
        await prepareExport(trees, text);
        const batch = buildBatch(trees, { ...text, step, estimator, checkServerIds: options.checkServerIds });
        const file = batchFile(options.out, step, format);
        mkdirSync(dirname(file), { recursive: true });
        // The metadata first: a trainer that sees the batch file can read whether it is partial.
        writeFileAtomic(batchMetaFile(options.out, step), JSON.stringify({ ...batch.meta, rows: batch.rows.length, file }) + '\n');
        await writeBatch(batch, format, file);
        batches.push(file);
        const failures = failuresOf.get(step) ?? summariseFailures(trees);
        failuresOf.delete(step);
        const warning = logprobWarning(batch);
        emit({
          kind: 'batch',
          step,
          file,
          rows: batch.rows.length,
          leaves: batch.rows.length + batch.meta.skipped_leaves,
          status: batch.meta.status,
          failures,
          ...(warning ? { warning } : {}),
        });
        if (atropos) {
          let pushed: AtroposPush;
          try {
            pushed = await atropos.client.push(atroposGroups(batch.rows, atropos.layout), options.signal);
          } catch (e) {
            if (options.signal?.aborted) return 'stopped';
            throw e;
          }
          emit({ kind: 'atropos', step, url: atropos.client.url, ...pushed });
        }
        if (last) return 'continue';
        if (atropos) {
          try {
            const { outstanding } = await atropos.client.waitUntilTaken(options.signal);
            emit({ kind: 'taken', step, outstanding });
            return 'continue';
          } catch (e) {
            if (options.signal?.aborted) return 'stopped';
            throw e;
          }
        }
        emit({ kind: 'waiting', step, file: weightsReadyFile(gate!.dir, step), ...(gate!.url ? { url: `${gate!.url}/weights` } : {}) });
        try {
          await gate!.wait(step, options.signal);
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
