import type { Allocator } from '../rollout/step-options.ts';
import { runStep, type EngineEvent, type EngineSettingsInput } from '../rollout/index.ts';
import { knowsTruth } from '../rollout/candidates.ts';
import type { Environment } from '../env/types.ts';
import type { Policy } from '../policy/types.ts';
import type { Spend } from '../budget/index.ts';
import { turnsTo, type Prompt, type RolloutTree } from '../tree/index.ts';
import type { Rng } from '../util/rng.ts';
import { depthRows, treeSamples, type DepthRow, type PrefixSample } from './measure.ts';

export interface DiagnoseOptions<S> {
  prompts: readonly Prompt[];
  env: Environment<S>;
  policy: Policy;
  /** Trajectories per prefix: the root's rollouts (depth 0) and each intermediate prefix's continuations. */
  k: number;
  /** Bare rollouts per prompt whose every intermediate prefix is expanded (the first `rollouts` of the root's k; ≤ k). */
  rollouts: number;
  rng: Rng;
  settings: EngineSettingsInput & { maxTurns: number };
  signal?: AbortSignal;
  onEvent?: (e: EngineEvent) => void;
}

export interface Diagnosis {
  rows: DepthRow[];
  /** What the whole diagnosis spent (the engine's ledger). */
  spend: Spend;
  trees: RolloutTree[];
  /** Trajectories that failed after their retries (they carry no outcome and are left out of every estimate). */
  failed: number;
  cancelled: boolean;
  /**
   * A server environment's continuations restore their prefix by replay (env/remote): how many
   * restores, environment steps replayed and their wall ms, and continuations skipped because a
   * replay differed; `forks`: the restores made by fork instead (a server that offers it, env/remote/fork.ts).
   * Absent for in-process environments (their restore calls no tool).
   */
  replay?: { restores: number; steps: number; ms: number; mismatches: number; forks?: number };
  /** What the policy's engine reported of the samples (tinker: prompt tokens sent, shared, its prefix-cache hits); absent for others. */
  engine?: Record<string, number>;
}

/**
 * Most trajectories a diagnosis can start: per prompt k at the root plus k at each of the
 * (maxTurns − 1) intermediate prefixes of each expanded rollout.
 */
export function trajectoryBound(o: { prompts: number; k: number; rollouts: number; maxTurns: number }): number {
  return o.prompts * o.k * (1 + o.rollouts * (o.maxTurns - 1));
}

/**
 * The diagnosis as an allocation strategy the engine runs like any other (one step): k bare rollouts
 * per prompt, then, from each of the first `rollouts` of them, K = k continuations at every
 * intermediate prefix. Nothing here is predicted: every prefix gets the same k.
 */
export function diagnosisAllocator(o: { prompts: readonly Prompt[]; k: number; rollouts: number; maxTurns: number }): Allocator {
  const perPrompt = o.k * o.rollouts * Math.max(0, o.maxTurns - 1);
  return {
    cap: trajectoryBound({ prompts: o.prompts.length, k: o.k, rollouts: o.rollouts, maxTurns: o.maxTurns }),
    roots: { plan: () => new Map(o.prompts.map((p) => [p.id, o.k])) },
    prefixes: {
      continuationBudget: () => perPrompt,
      plan: (input) => {
        // A candidate's id is a path "<prompt>/<slot>/…": its first slot names the bare rollout it lies on.
        const head = input.promptId.length + 1;
        const plan = new Map<string, number>();
        for (const c of input.prefixes) {
          const slot = Number(c.id.slice(head).split('/')[0]);
          if (slot < o.rollouts) plan.set(c.id, o.k);
        }
        return plan;
      },
    },
  };
}

/**
 * Samples the diagnosis (one engine step with diagnosisAllocator) and measures it per depth
 * (measure.ts). Deterministic for a seed: node ids are fixed at plan time and every trajectory draws
 * from rng.fork(its first node id), whatever the concurrency.
 */
export async function diagnose<S>(o: DiagnoseOptions<S>): Promise<Diagnosis> {
  if (!(Number.isInteger(o.k) && o.k >= 2)) throw new RangeError(`k must be an integer ≥ 2 (two outcomes at least to see a contrast), got ${o.k}`);
  if (!(Number.isInteger(o.rollouts) && o.rollouts >= 1 && o.rollouts <= o.k))
    throw new RangeError(`rollouts must be an integer in [1, k = ${o.k}], got ${o.rollouts}`);
  const strategy = diagnosisAllocator({ prompts: o.prompts, k: o.k, rollouts: o.rollouts, maxTurns: o.settings.maxTurns });
  const result = await runStep({
    prompts: o.prompts,
    env: o.env,
    policy: o.policy,
    rng: o.rng,
    strategy,
    settings: o.settings,
    signal: o.signal,
    onEvent: o.onEvent,
    greedy: false,
  });
  const samples: PrefixSample[] = [];
  const ended = new Map<number, number>();
  const byId = new Map(o.prompts.map((p) => [p.id, p]));
  for (const tree of result.trees) {
    const prompt = byId.get(tree.promptId)!;
    const env = o.env;
    const truth = knowsTruth(env) ? (node: { id: string }) => env.trueSuccess(prompt, turnsTo(tree, node.id)) : undefined;
    const t = treeSamples(tree, o.rollouts, truth);
    samples.push(...t.samples);
    for (const [d, n] of t.endedAt) ended.set(d, (ended.get(d) ?? 0) + n);
  }
  const mismatches = Object.values(result.replayMismatches.byPrompt).reduce((a, b) => a + b, 0);
  const forks = o.env.serverLoad?.().forks;
  const replay = o.env.restoreCost !== undefined ? { replay: { ...result.replayCost, mismatches, ...(forks ? { forks } : {}) } } : {};
  const engine = o.policy.engineCounts?.();
  return {
    rows: depthRows(samples, ended),
    spend: result.spend,
    trees: result.trees,
    failed: result.progress.failed,
    cancelled: result.cancelled,
    ...replay,
    ...(engine ? { engine } : {}),
  };
}
