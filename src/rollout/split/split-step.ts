import { DEFAULT_SCHEDULE, type RootCandidate } from '../../allocate/types.ts';
import { splitRefusal } from './refusal.ts';
import { emptySpend } from '../../budget/index.ts';
import { addServerLoad } from '../../env/server-load.ts';
import type { RolloutTree } from '../../tree/index.ts';
import { runStep } from '../engine.ts';
import { addProgress, emptyProgress, type Progress } from '../events.ts';
import type { RemoteRound, RemoteRoundInput, RemoteRoundOutcome } from '../remote-round.ts';
import { engineSettings } from '../settings.ts';
import { addReplayCost, addReplayMismatches } from '../replay-counts.ts';
import type { StepOptions, StepResult } from '../step-options.ts';
import { SplitRefused } from './refusal.ts';
import { partitionPlan, type Share } from './partition.ts';
import type { ResultMessage, StepPartsSpec, TaskMessage } from './protocol.ts';
import { StepWorkerError, StepWorkerPool } from './worker-pool.ts';

/** What one worker ran, with its own clock (for benches and logs). */
export interface WorkerStats {
  worker: number;
  prompts: number;
  trajectories: number;
  /** Policy calls (turns) its trees cost. */
  requests: number;
  cpuUs: number;
  wallMs: number;
  peakRssMB: number;
}

export interface SplitOptions {
  /** Worker processes to start for this step (closed after it), or a pool already started (left open). */
  workers: number | StepWorkerPool;
  /** What the workers build their environment, policy, scorer and prefix planner from (with `workers` a number). */
  parts?: StepPartsSpec;
  /** Largest message either way (default protocol.ts DEFAULT_MAX_MESSAGE_BYTES). */
  maxMessageBytes?: number;
  /** Past this many milliseconds the workers are killed and the step fails (default: no limit beyond the engine's per-call timeouts). */
  timeoutMs?: number;
  onWorker?: (stats: WorkerStats) => void;
}

/**
 * One step split across worker processes by prompt. This process plans the roots (round 0, as the
 * engine does in process), gives each worker a share of the planned prompts balanced by what they
 * may spend, takes back their finished trees and spend, and runs the leftover top-up on the merged
 * trees. Every stream the engine draws from is forked from the step's seed by a trajectory's node id
 * or a prompt's id, never by order, so in the trajectories unit the trees are those of the in-process
 * step. Settings whose outcome depends on all prompts at once are refused (SplitRefused).
 */
export async function runSplitStep<S>(options: StepOptions<S>, split: SplitOptions): Promise<StepResult> {
  const refusal = splitRefusal(options);
  if (refusal) throw new SplitRefused(`${refusal}; or set engine.workers: 1 to run the step in one process`);
  if (typeof split.workers === 'number' && !split.parts) throw new RangeError('runSplitStep: parts are needed to start workers');
  return runStep({ ...options, remote: remoteRound(options, split) });
}

function remoteRound<S>(options: StepOptions<S>, split: SplitOptions): RemoteRound {
  return {
    async run(input) {
      const pool =
        typeof split.workers === 'number'
          ? await StepWorkerPool.start({
              workers: split.workers,
              parts: split.parts!,
              ...(split.maxMessageBytes ? { maxMessageBytes: split.maxMessageBytes } : {}),
            })
          : split.workers;
      try {
        return await runShares(options, split, pool, input);
      } finally {
        if (typeof split.workers === 'number') await pool.close();
      }
    },
  };
}

/** Sends each worker its share and merges what they answer; the first failure (or the deadline) kills them all. */
async function runShares<S>(options: StepOptions<S>, split: SplitOptions, pool: StepWorkerPool, input: RemoteRoundInput): Promise<RemoteRoundOutcome> {
  const planner = options.strategy?.prefixes;
  const budgetOf = (m: number) => (planner ? planner.continuationBudget(m) : 0);
  const shares = partitionPlan(input.plan, pool.size, (m) => m + budgetOf(m));
  const settings = engineSettings(options.settings);
  // The step's requests in flight are shared out, so the servers see the same load at any worker count.
  const perWorker = { ...settings, concurrency: Math.max(1, Math.ceil(settings.concurrency / Math.max(1, shares.filter((s) => s.length).length))) };
  const prompts = new Map(options.prompts.map((p) => [p.id, p]));
  const caps = input.price ? pricedCaps(shares, budgetOf, input.price) : undefined;
  const candidates = new Map<string, RootCandidate>(input.candidates.map((c) => [c.promptId, c]));
  const latest = shares.map(() => emptyProgress());
  const heard = (i: number) => (p: Progress) => {
    latest[i] = p;
    input.onProgress?.(latest.reduce(addProgress, emptyProgress()));
  };
  let failure: Error | undefined;
  const stop = (e?: Error) => {
    failure ??= e;
    pool.kill();
  };
  const onAbort = () => stop();
  input.signal.addEventListener('abort', onAbort, { once: true });
  const timer =
    split.timeoutMs !== undefined
      ? setTimeout(
          () => stop(new StepWorkerError(-1, `the workers had not finished the step after ${split.timeoutMs} ms (timeoutMs); all were killed`)),
          split.timeoutMs,
        )
      : undefined;
  try {
    const answers = await Promise.all(
      shares.map(async (share, i): Promise<ResultMessage | undefined> => {
        if (share.length === 0) return undefined;
        const task: TaskMessage = {
          kind: 'run',
          prompts: share.map(([id]) => prompts.get(id)!),
          plan: share,
          candidates: share.flatMap(([id]) => (candidates.has(id) ? [candidates.get(id)!] : [])),
          ...(input.weights
            ? { weights: share.flatMap(([id]): Array<[string, number]> => (input.weights!.has(id) ? [[id, input.weights!.get(id)!]] : [])) }
            : {}),
          seed: options.rng.seed,
          settings: perWorker,
          ...(options.greedy ? { greedy: true } : {}),
          ...(planner ? { expansion: { budgets: share.map(([id, m]) => [id, budgetOf(m)]), schedule: planner.schedule ?? DEFAULT_SCHEDULE } } : {}),
          ...(input.price ? { priced: { unit: input.price.unit, root: input.price.root, cap: caps![i]! } } : {}),
        };
        try {
          const answer = await pool.run(i, task, describeShare(share), heard(i));
          heard(i)(answer.progress); // the share's final counts, which its last report may not have had
          split.onWorker?.({
            worker: i,
            prompts: share.length,
            trajectories: answer.spend.bare + answer.spend.continuation,
            requests: answer.spend.turns,
            cpuUs: answer.cpuUs,
            wallMs: answer.wallMs,
            peakRssMB: answer.peakRssMB,
          });
          return answer;
        } catch (e) {
          stop(e as Error);
          return undefined;
        }
      }),
    );
    if (input.signal.aborted)
      return {
        trees: [],
        spend: emptySpend(),
        progress: emptyProgress(),
        failures: {},
        replayMismatches: { byPrompt: {} },
        replayCost: { restores: 0, steps: 0, ms: 0 },
      };
    if (failure) throw failure;
    return merge(
      answers.filter((a): a is ResultMessage => a !== undefined),
      shares,
    );
  } finally {
    clearTimeout(timer);
    input.signal.removeEventListener('abort', onAbort);
  }
}

/**
 * Each share's cap in a priced unit: its bare rollouts and continuation budget at the planned price,
 * scaled down together (floored) when the step has less left than the plan's total, so the caps never
 * sum past what the step's ledger can absorb. What a share leaves unspent returns to the step, whose
 * leftover top-up then spends it.
 */
export function pricedCaps(shares: readonly Share[], budgetOf: (m: number) => number, price: { root: number; available: number }): number[] {
  const wanted = shares.map((share) => share.reduce((a, [, m]) => a + (m + budgetOf(m)) * price.root, 0));
  const total = wanted.reduce((a, b) => a + b, 0);
  const scale = total > price.available ? price.available / total : 1;
  return wanted.map((w) => Math.floor(w * scale));
}

/** The workers' answers as one: every planned prompt's tree exactly once, spend and counts summed. */
function merge(answers: readonly ResultMessage[], shares: readonly Share[]): RemoteRoundOutcome {
  const trees: RolloutTree[] = [];
  const spend = emptySpend();
  const progress = emptyProgress();
  const failures: RemoteRoundOutcome['failures'] = {};
  const replayMismatches: RemoteRoundOutcome['replayMismatches'] = { byPrompt: {} };
  const replayCost: RemoteRoundOutcome['replayCost'] = { restores: 0, steps: 0, ms: 0 };
  let serverLoad: RemoteRoundOutcome['serverLoad'];
  for (const a of answers) {
    serverLoad = addServerLoad(serverLoad, a.serverLoad);
    addReplayMismatches(replayMismatches, a.replayMismatches);
    addReplayCost(replayCost, a.replayCost);
    trees.push(...a.trees);
    for (const k of Object.keys(spend) as Array<keyof typeof spend>) spend[k] += a.spend[k];
    addProgress(progress, a.progress);
    for (const [code, n] of Object.entries(a.failures)) failures[code as keyof typeof failures] = (failures[code as keyof typeof failures] ?? 0) + n!;
  }
  const planned = shares.flat().map(([id]) => id);
  const got = new Set(trees.map((t) => t.promptId));
  const missing = planned.filter((id) => !got.has(id));
  if (missing.length > 0 || got.size !== trees.length)
    throw new StepWorkerError(
      -1,
      `the workers' trees do not match the plan: ${missing.length} planned prompts without a tree (${missing.slice(0, 5).join(', ')}), ${trees.length - got.size} duplicates`,
    );
  return { trees, spend, progress, failures, replayMismatches, replayCost, ...(serverLoad ? { serverLoad } : {}) };
}

/** A share in an error message: its first prompt ids and its size. */
function describeShare(share: Share): string {
  const ids = share.slice(0, 4).map(([id]) => `"${id}"`);
  const trajectories = share.reduce((a, [, m]) => a + m, 0);
  return `prompts ${ids.join(', ')}${share.length > 4 ? ', …' : ''} (${share.length} prompts, ${trajectories} bare rollouts)`;
}
