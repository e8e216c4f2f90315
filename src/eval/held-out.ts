/**
 * The training loop's held-out evaluation (every `eval.every` steps), by the same harness as
 * `trace-rl eval` (runEval): test_accuracy for every kind; a kind that evaluates by dataset
 * (`EnvKind.heldOutByDataset`, e.g. qa) also its other metrics per dataset; a run whose policy supplies
 * the exact success probabilities (the simulator's tabular policy) also its exact J, with no sampling noise.
 */
import { envKinds } from '../env/registry.ts';
import type { Environment, KnowsTruth } from '../env/types.ts';
import type { Policy } from '../policy/types.ts';
import type { EngineSettingsInput } from '../rollout/index.ts';
import type { Prompt } from '../tree/types.ts';
import { createRng, type Rng } from '../util/rng.ts';
import { runEval, type EvalResult } from './harness.ts';

export interface HeldOutOptions {
  kind: string;
  env: Environment<unknown>;
  policy: Policy;
  /** The run's held-out prompts. */
  test: readonly Prompt[];
  /** Questions evaluated (per dataset where the kind has datasets). */
  questions: number;
  /** Sampled rollouts per question besides the greedy one (0 = greedy only). */
  samples: number;
  seed: number;
  step: number;
  engine: EngineSettingsInput & { concurrency: number };
  signal?: AbortSignal;
  /** The exact success probabilities of the run's policy, when it supplies them: exact J is logged. */
  truth?: KnowsTruth;
  /** The run's training prompts (train_accuracy_exact, with `truth`). */
  train?: readonly Prompt[];
}

/** The first `n` held-out questions of each dataset (`prompt.meta.dataset`), so every dataset gets its metrics. */
function firstOfEachDataset(test: readonly Prompt[], n: number, kind: string): Map<string, Prompt[]> {
  const datasets = new Map<string, Prompt[]>();
  for (const p of test) {
    const name = String(p.meta?.dataset ?? kind);
    const list = datasets.get(name) ?? [];
    if (list.length < n) list.push(p);
    datasets.set(name, list);
  }
  return datasets;
}

/** `eval_<metric>/<dataset>` for every metric of the evaluation but accuracy (test_accuracy already says it). */
function perDatasetMetrics(result: EvalResult): Record<string, number> {
  const metrics: Record<string, number> = {};
  for (const [name, d] of result.datasets) {
    for (const metric of result.metrics) if (metric !== 'accuracy') metrics[`eval_${metric}/${name}`] = d.metrics[metric]!.mean;
  }
  return metrics;
}

/**
 * test_accuracy: the greedy success rate on the held-out questions, one rollout each, no budget cap
 * (by dataset: no metric when there is no held-out question); with `samples` > 0 also test_accuracy_sampled, the
 * mean success of that many sampled rollouts on each of the first held-out questions (drawn as in
 * training, at the policy's temperature), on the step's own stream.
 */
export async function heldOutMetrics(o: HeldOutOptions): Promise<Record<string, number>> {
  const stream = (name: string) => createRng(o.seed).fork(`${name}/${o.step}`);
  const common = { env: o.env, policy: o.policy, settings: o.engine, signal: o.signal };
  const metrics: Record<string, number> = {};
  if (envKinds.has(o.kind) && envKinds.get(o.kind).heldOutByDataset) {
    const datasets = firstOfEachDataset(o.test, o.questions, o.kind);
    if (countOf(datasets) > 0) {
      const result = await runEval({
        suite: { kind: o.kind, env: o.env, datasets },
        policy: o.policy,
        greedy: true,
        concurrency: o.engine.concurrency,
        engine: o.engine,
        seed: o.seed,
        signal: o.signal,
      });
      Object.assign(metrics, { test_accuracy: successRate(result, countOf(datasets), 1) }, perDatasetMetrics(result));
    }
  } else {
    metrics.test_accuracy = await greedyAccuracy({ ...common, prompts: o.test.slice(0, o.questions), rng: stream('eval') });
  }
  if (o.truth) Object.assign(metrics, exactAccuracy(o.truth, o.test.slice(0, o.questions), o.train ?? []));
  if (o.samples === 0) return metrics;
  return {
    ...metrics,
    test_accuracy_sampled: await sampledAccuracy({ ...common, prompts: o.test.slice(0, o.questions), rng: stream('eval-sampled'), samples: o.samples }),
  };
}

/**
 * Exact J, the policy's expected success from the root, J = mean_i V_π(prompt i), on the first held-out
 * questions (test_accuracy_exact) and on every training prompt (train_accuracy_exact: a policy with
 * nothing shared between prompts, as the tabular one, learns only those).
 */
export function exactAccuracy(truth: KnowsTruth, test: readonly Prompt[], train: readonly Prompt[]): Record<string, number> {
  const J = (ps: readonly Prompt[]) => (ps.length ? ps.reduce((s, p) => s + truth.trueSuccess(p, []), 0) / ps.length : 0);
  return { test_accuracy_exact: J(test), ...(train.length ? { train_accuracy_exact: J(train) } : {}) };
}

export interface GreedyAccuracyOptions {
  env: Environment<unknown>;
  policy: Policy;
  prompts: readonly Prompt[];
  /** The evaluation's random stream (greedy decoding ignores it; tools and the simulator may not). */
  rng: Rng;
  /** Engine settings (turn limit, concurrency, retries); defaults as in `engineSettings`. */
  settings?: EngineSettingsInput;
  signal?: AbortSignal;
}

export interface SampledAccuracyOptions extends GreedyAccuracyOptions {
  /** Sampled rollouts per prompt (≥ 1). */
  samples: number;
}

/**
 * Greedy success rate: one greedy rollout per prompt by the evaluation harness, no budget cap, and
 * the share of prompts whose trajectory was rewarded, Σ reward / #prompts (0 for no prompts). The
 * training loop's held-out evaluation and the benches measure accuracy this way.
 */
export function greedyAccuracy(options: GreedyAccuracyOptions): Promise<number> {
  return meanReward(options, 1, true);
}

/**
 * Sampled success rate: `samples` rollouts per prompt drawn as in training (the policy's own sampling,
 * at its temperature), Σ reward / (#prompts · samples). It estimates the mean of the policy's success
 * probabilities over the prompts: what RL maximises, and what moves first when RL reshapes the
 * sampling distribution without changing its argmax.
 */
export function sampledAccuracy(options: SampledAccuracyOptions): Promise<number> {
  if (!Number.isInteger(options.samples) || options.samples < 1)
    return Promise.reject(new RangeError(`sampledAccuracy: samples must be an integer ≥ 1, got ${options.samples}`));
  return meanReward(options, options.samples, false);
}

async function meanReward(o: GreedyAccuracyOptions, samples: number, greedy: boolean): Promise<number> {
  const datasets = new Map([['held-out', [...o.prompts]]]);
  const result = await runEval({
    suite: { kind: 'accuracy', env: o.env, datasets },
    policy: o.policy,
    samples,
    greedy,
    concurrency: o.settings?.concurrency ?? 8,
    engine: o.settings,
    rng: o.rng,
    signal: o.signal,
  });
  return successRate(result, o.prompts.length, samples);
}

const countOf = (datasets: Map<string, Prompt[]>) => [...datasets.values()].reduce((n, d) => n + d.length, 0);

/** Σ reward over every trajectory / (questions · samples), 0 for no question: a trajectory without a reward (an error) counts 0. */
function successRate(result: EvalResult, questions: number, samples: number): number {
  let solved = 0;
  for (const r of result.records) solved += r.samples.reduce((s, x) => s + (x.reward ?? 0), 0);
  return questions > 0 ? solved / (questions * samples) : 0;
}
