import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { buildBatch, logprobWarning, prepareExport, type BatchMeta } from '../export/rows.ts';
import { storedText } from '../export/stored-step.ts';
import { containerOf, writeBatch, type ExportFormat } from '../export/write.ts';
import type { ChatTemplate, Tokenizer } from '../tokens/index.ts';
import type { Policy } from '../policy/types.ts';
import { OpenAIPolicy } from '../policy/openai/index.ts';
import { failureCauses, summariseFailures, type FailureSummary } from '../rollout/index.ts';
import { writeFileAtomic } from '../store/atomic-write.ts';
import { parseTrainConfig, storedTrainConfig, train, type ExternalTrainer, type LoopEvent, type TrainConfig } from '../train/index.ts';
import { RunStore } from '../store/index.ts';
import { weightsReadyFile, WeightsWaitAborted, type WeightsGate } from './weights-gate.ts';
import { AtroposError, type AtroposClient, type AtroposPush } from './atropos-client.ts';
import { atroposGroups, type AtroposLayout } from './atropos-groups.ts';

export type RolloutServiceEvent =
  | LoopEvent
  | { kind: 'batch'; step: number; file: string; rows: number; leaves: number; status: BatchMeta['status']; failures: FailureSummary; warning?: string }
  | { kind: 'waiting'; step: number; file: string; url?: string }
  | ({ kind: 'atropos'; step: number; url: string; skipped?: number } & AtroposPush)
  | { kind: 'trainer-finished'; step: number; url: string; trainerStep: number; trainerSteps: number }
  | { kind: 'taken'; step: number; outstanding: number }
  | { kind: 'weights'; step: number };

export interface RolloutServiceOptions {
  /** New run folder: `run.sqlite` (steps and trees, readable by `trace-rl export` and `report`) and `batches/`. */
  out: string;
  /** Continue the rollout run in `out` (its stored configuration; `config` is not read) from its last completed step. */
  resume?: boolean;
  /** New runs only: notes kept with the run (RunStore.note), e.g. the tokenizer options `export` reads. */
  notes?: Record<string, unknown>;
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
  /** trainer-finished: the Atropos trainer has taken all the batches it registered for (its num_steps), so no later step would be trained. */
  status: 'finished' | 'stopped' | 'trainer-finished';
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
  const resumed = options.resume ? storedRollout(options.out) : undefined;
  const config = resumed?.config ?? parseTrainConfig(options.config);
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
  const hand: HandOffContext = { options, format, emit, batches, failuresOf, trainerFinished: false };
  if (resumed) {
    // The last stored step's hand-off may not have finished (its batch file, its push, the trainer's
    // wait): it is finished first, from what the run noted, so nothing is pushed twice.
    const status = await finishStoredHandOff(hand, config);
    if (status !== 'continue') return { config, batches, status };
  }
  const outcome = await train({
    out: options.out,
    config,
    ...(options.resume ? { resume: true } : {}),
    ...(options.notes ? { notes: options.notes } : {}),
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
      // The loop knows 'continue' and 'stopped': a finished trainer stops it, and the result says why.
      handOff: async (step) => {
        const r = await handOffStep(hand, step);
        if (r === 'trainer-finished') hand.trainerFinished = true;
        return r === 'continue' ? 'continue' : 'stopped';
      },
    },
  });
  if (hand.trainerFinished) return { config, batches, status: 'trainer-finished' };
  return { config, batches, status: outcome.status === 'stopped' ? 'stopped' : 'finished' };
}

interface HandOffContext {
  options: RolloutServiceOptions;
  format: ExportFormat;
  emit: (e: RolloutServiceEvent) => void;
  batches: string[];
  failuresOf: Map<number, FailureSummary>;
  trainerFinished: boolean;
}

type HandOff = Parameters<ExternalTrainer['handOff']>[0];

/** What `rollout --atropos` notes in the run per step (RunStore.note `atropos.step.<n>`): the groups the API acknowledged. */
export interface AtroposStepNote {
  /** Groups the step's rows make. */
  groups: number;
  /** Of those, the first `acknowledged` were answered `received` by the API (pushed in order). */
  acknowledged: number;
  /** The trainer took them (the wait after the push ended). */
  taken: boolean;
}

export const atroposNoteKey = (step: number) => `atropos.step.${step}`;

/** A stored run's configuration, for `--resume`. */
function storedRollout(out: string): { config: TrainConfig } {
  const store = RunStore.open(out, { readonly: true });
  try {
    return { config: storedTrainConfig(store) };
  } finally {
    store.close();
  }
}

/** Finishes the last stored step's hand-off of a resumed run; 'continue' when the run goes on. */
async function finishStoredHandOff(hand: HandOffContext, config: TrainConfig): Promise<RolloutServiceResult['status'] | 'continue'> {
  const store = RunStore.open(hand.options.out);
  try {
    const step = store.lastStep();
    if (step < 0) return 'continue';
    const last = step === config.steps - 1;
    hand.emit({ kind: 'resumed', from: step + 1 });
    const status = await handOffStep(hand, {
      step,
      trees: store.trees(step),
      treeRecords: store.treeRecords(step),
      last,
      note: (key, value) => store.writeNote(key, value),
      resumed: { note: <T>(key: string) => store.note<T>(key) },
    });
    if (status === 'stopped') return 'stopped';
    if (status === 'trainer-finished') return 'trainer-finished';
    return last ? 'finished' : 'continue';
  } finally {
    store.close();
  }
}

/**
 * One stored step handed to the trainer: its batch file (kept if a resumed run wrote it already), the
 * Atropos push (only the groups the API has not acknowledged, each acknowledgement noted in the run at
 * once), then the wait for the trainer (none after the last step).
 */
async function handOffStep(
  hand: HandOffContext,
  { step, trees, treeRecords, last, note, resumed }: HandOff & { resumed?: { note<T>(key: string): T | undefined } },
): Promise<'continue' | 'stopped' | 'trainer-finished'> {
  const { options, format, emit } = hand;
  const { gate, atropos } = options;
  const { render, estimator } = storedText(trees, treeRecords, `${options.out} step ${step}`);
  const text = { tokenizer: options.tokenizer, template: options.template, render };
  await prepareExport(trees, text);
  const batch = buildBatch(trees, { ...text, step, estimator, checkServerIds: options.checkServerIds });
  const file = batchFile(options.out, step, format);
  // From the moment a trainer can see the batch, the gate accepts this step's weights, and only them.
  if (gate && !last) gate.expect(step);
  if (!(resumed && existsSync(file) && existsSync(batchMetaFile(options.out, step)))) {
    mkdirSync(dirname(file), { recursive: true });
    // The metadata first: a trainer that sees the batch file can read whether it is partial.
    writeFileAtomic(batchMetaFile(options.out, step), JSON.stringify({ ...batch.meta, rows: batch.rows.length, file }) + '\n');
    await writeBatch(batch, format, file);
    hand.batches.push(file);
    const failures = hand.failuresOf.get(step) ?? summariseFailures(trees);
    hand.failuresOf.delete(step);
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
  }
  if (atropos) {
    const groups = atroposGroups(batch.rows, atropos.layout);
    const key = atroposNoteKey(step);
    const before = resumed?.note<AtroposStepNote>(key) ?? { groups: groups.length, acknowledged: 0, taken: false };
    if (before.groups !== groups.length)
      throw new AtroposError(
        `${options.out} step ${step}: the run noted ${before.groups} Atropos groups for this step, its rows now make ${groups.length} (another --atropos-layout or tokenizer?); resume with the settings the run was made with`,
      );
    const acked = { ...before };
    if (acked.acknowledged < groups.length) {
      let pushed: AtroposPush;
      try {
        pushed = await atropos.client.push(groups.slice(acked.acknowledged), options.signal, (n) => {
          acked.acknowledged = before.acknowledged + n;
          note(key, acked);
        });
      } catch (e) {
        if (options.signal?.aborted) return 'stopped';
        throw e;
      }
      emit({ kind: 'atropos', step, url: atropos.client.url, ...pushed, ...(before.acknowledged > 0 ? { skipped: before.acknowledged } : {}) });
    }
    note(key, acked);
    if (last || acked.taken) return 'continue';
    let taken: Awaited<ReturnType<AtroposClient['waitUntilTaken']>>;
    try {
      taken = await atropos.client.waitUntilTaken(options.signal);
    } catch (e) {
      if (options.signal?.aborted) return 'stopped';
      throw e;
    }
    if (taken.trainerFinished) {
      emit({ kind: 'trainer-finished', step, url: atropos.client.url, trainerStep: taken.step, trainerSteps: taken.trainerSteps });
      return 'trainer-finished';
    }
    note(key, { ...acked, taken: true });
    emit({ kind: 'taken', step, outstanding: taken.outstanding });
    return 'continue';
  }
  if (last) return 'continue';
  emit({ kind: 'waiting', step, file: weightsReadyFile(gate!.dir, step), ...(gate!.url ? { url: `${gate!.url}/weights` } : {}) });
  try {
    await gate!.wait(step, options.signal);
  } catch (e) {
    if (e instanceof WeightsWaitAborted) return 'stopped';
    throw e;
  }
  emit({ kind: 'weights', step });
  return 'continue';
}
