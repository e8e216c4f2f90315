/**
 * `runEval`: an agent on the held-out questions of every dataset of an environment, with any policy.
 * Each question gets `samples` trajectories (one greedy trajectory by default) from its own random
 * stream (seed, dataset, question id), so a question's result does not depend on scheduling, on the
 * concurrency, or on whether the evaluation was interrupted and resumed. Questions run `concurrency /
 * samples` at a time (at most `concurrency` policy requests in flight); failed calls are retried by the
 * engine; a question whose trajectory still failed is recorded with its error and run again on resume.
 */
import type { Environment } from '../env/types.ts';
import type { Prompt } from '../tree/types.ts';
import type { Policy } from '../policy/types.ts';
import { runStep, type EngineSettingsInput } from '../rollout/index.ts';
import { leaves, type RolloutTree } from '../tree/index.ts';
import { createRng, type Rng } from '../util/rng.ts';
import { EvalStore, type EvalRecord, type SampleRecord } from './eval-store.ts';
import { trajectoryMetricsOf } from '../env/registry.ts';
import type { TrajectoryMetrics } from '../env/metrics.ts';
import { macroAverage, summarize, type MetricSummary } from './stats.ts';

/** What is evaluated: an environment and its held-out questions per dataset. */
export interface EvalSuite {
  /** The environment kind (selects the metrics: its entry's `metrics`, src/env/kind.ts). */
  kind: string;
  env: Environment<unknown>;
  datasets: ReadonlyMap<string, readonly Prompt[]>;
  /**
   * Questions per dataset left out at setup because their prompt does not fit the policy's context
   * (train/prompt-fit.ts); they are not in `datasets`, and each table row counts them beside n, so a
   * mean over n is read as over the questions that could run.
   */
  skipped?: ReadonlyMap<string, number>;
}

export interface EvalOptions {
  suite: EvalSuite;
  policy: Policy;
  /** Trajectories per question (default 1). */
  samples?: number;
  /** Greedy decoding (default true; sampled when false). */
  greedy?: boolean;
  /** Most policy requests in flight at once (default 8). */
  concurrency?: number;
  /** Engine settings (turn limit, tokens per turn, timeout, retries); concurrency is set from above. */
  engine?: EngineSettingsInput;
  seed?: number;
  /**
   * One random stream for every question instead of one per (seed, dataset, question id). A
   * trajectory forks its stream from its node ids, which name the prompt, so results still do not
   * depend on scheduling; training's held-out accuracy has measured on such a per-step stream since
   * its first runs, and keeps doing so.
   */
  rng?: Rng;
  /** Where results are kept and resumed from (default: kept in memory only). */
  store?: EvalStore;
  signal?: AbortSignal;
  onQuestion?: (done: number, total: number, record: EvalRecord) => void;
}

export interface DatasetResult {
  n: number;
  /** Questions whose trajectory ended in an error after its retries (scored 0). */
  errors: number;
  /** Questions left out at setup: too long for the policy's context (EvalSuite.skipped); not in n. */
  skipped: number;
  metrics: Record<string, MetricSummary>;
}

export interface EvalResult {
  kind: string;
  metrics: readonly string[];
  datasets: Map<string, DatasetResult>;
  average: Record<string, MetricSummary>;
  records: EvalRecord[];
  /** Questions in the suite; less than records.length + skipped when stopped early. */
  total: number;
  /** True when the signal stopped it before every question was done. */
  stopped: boolean;
}

export async function runEval(options: EvalOptions): Promise<EvalResult> {
  const { suite, policy } = options;
  const store = options.store ?? EvalStore.inMemory();
  const samples = options.samples ?? 1;
  const greedy = options.greedy ?? true;
  const concurrency = options.concurrency ?? 8;
  const kind = trajectoryMetricsOf(suite.kind);
  const seed = options.seed ?? 0;
  const all: Array<{ dataset: string; prompt: Prompt }> = [];
  for (const [dataset, prompts] of suite.datasets) for (const prompt of prompts) all.push({ dataset, prompt });
  const todo = all.filter((u) => !store.done(u.dataset, u.prompt.id));
  let finished = all.length - todo.length;
  const workers = Math.max(1, Math.floor(concurrency / samples));
  const perQuestion = Math.min(samples, concurrency);
  let next = 0;
  const work = async () => {
    while (next < todo.length && !options.signal?.aborted) {
      const { dataset, prompt } = todo[next++]!;
      const result = await runStep({
        prompts: [prompt],
        env: suite.env,
        policy,
        rng: options.rng ?? createRng(seed).fork(`eval/${dataset}/${prompt.id}`),
        rootPlan: new Map([[prompt.id, samples]]),
        greedy,
        settings: { ...options.engine, concurrency: perQuestion },
        signal: options.signal,
      });
      if (result.cancelled) return;
      const record = toRecord(kind, dataset, prompt, result.trees[0]!);
      store.append(record);
      finished++;
      options.onQuestion?.(finished, all.length, record);
    }
  };
  await Promise.all(Array.from({ length: Math.min(workers, Math.max(1, todo.length)) }, work));
  // Scored again from their stored trees, so questions a resumed evaluation kept from an older version
  // are measured exactly like new ones (a metric added since would otherwise read as 0).
  const records = all.flatMap((u) => {
    const r = store.get(u.dataset, u.prompt.id);
    return r ? [toRecord(kind, u.dataset, u.prompt, r.tree)] : [];
  });
  return {
    ...tabulate(kind, [...suite.datasets.keys()], records, suite.skipped),
    kind: suite.kind,
    records,
    total: all.length,
    stopped: options.signal?.aborted === true && finished < all.length,
  };
}

/** One question's record: per-sample outcome and metrics, and their means. */
export function toRecord(kind: TrajectoryMetrics, dataset: string, prompt: Prompt, tree: RolloutTree): EvalRecord {
  const ends = leaves(tree).filter((n) => n.end !== undefined);
  const samples: SampleRecord[] = ends.map((leaf) => {
    const turn = leaf.turn;
    const answer = turn?.action.type === 'answer' && !turn.error ? turn.action.input : undefined;
    const outcome = { ...(answer !== undefined ? { answer } : {}), ...(leaf.reward !== undefined ? { reward: leaf.reward } : {}), end: leaf.end };
    return {
      ...outcome,
      metrics: kind.score(prompt, outcome),
      ...(leaf.end === 'error' && turn?.error ? { error: `${turn.error.code}: ${turn.error.message}` } : {}),
    };
  });
  const metrics: Record<string, number> = {};
  for (const m of kind.metrics) metrics[m] = samples.length ? samples.reduce((a, s) => a + (s.metrics[m] ?? 0), 0) / samples.length : 0;
  return {
    dataset,
    id: prompt.id,
    question: prompt.question,
    answers: prompt.answers,
    samples,
    metrics,
    errors: samples.filter((s) => s.end === 'error').length,
    tree,
  };
}

/** The table: per dataset n, errors, skipped and each metric's mean and 95 % interval; the macro average. */
export function tabulate(
  kind: TrajectoryMetrics,
  datasets: readonly string[],
  records: readonly EvalRecord[],
  skipped: ReadonlyMap<string, number> = new Map(),
): Pick<EvalResult, 'metrics' | 'datasets' | 'average'> {
  const out = new Map<string, DatasetResult>();
  const parts = new Map<string, Array<{ n: number; mean: number; variance: number }>>();
  for (const d of datasets) {
    const rs = records.filter((r) => r.dataset === d);
    if (rs.length === 0) continue;
    const metrics: Record<string, MetricSummary> = {};
    for (const m of kind.metrics) {
      const s = summarize(rs.map((r) => r.metrics[m] ?? 0));
      metrics[m] = { mean: s.mean, lo: s.lo, hi: s.hi };
      parts.set(m, [...(parts.get(m) ?? []), { n: rs.length, mean: s.mean, variance: s.variance }]);
    }
    out.set(d, { n: rs.length, errors: rs.filter((r) => r.errors > 0).length, skipped: skipped.get(d) ?? 0, metrics });
  }
  const average: Record<string, MetricSummary> = {};
  for (const m of kind.metrics) average[m] = macroAverage(parts.get(m) ?? []);
  return { metrics: kind.metrics, datasets: out, average };
}

/** A metric's 95 % interval in the `--json` object: [lo, hi]. */
export type Interval = [number, number];

/** One row of the `--json` object: n, errors, skipped, each metric's mean, and `ci95`: each metric's 95 % interval. */
export type JsonRow = Record<string, number | Record<string, Interval>>;

/**
 * The `--json` object: `{"datasets": {name: {n, errors, skipped, <metric>: mean, ci95: {<metric>: [lo, hi]}}},
 * "average": {<metric>: mean, ci95: {…}}}`, the same numbers and intervals as the table.
 */
export function resultJson(result: Pick<EvalResult, 'metrics' | 'datasets' | 'average'>): { datasets: Record<string, JsonRow>; average: JsonRow } {
  const row = (summaries: Record<string, MetricSummary>, head: Record<string, number>): JsonRow => {
    const ci95: Record<string, Interval> = {};
    const out: JsonRow = { ...head };
    for (const m of result.metrics) {
      out[m] = round(summaries[m]!.mean);
      ci95[m] = [round(summaries[m]!.lo), round(summaries[m]!.hi)];
    }
    out.ci95 = ci95;
    return out;
  };
  const datasets: Record<string, JsonRow> = {};
  for (const [name, d] of result.datasets) datasets[name] = row(d.metrics, { n: d.n, errors: d.errors, skipped: d.skipped });
  return { datasets, average: row(result.average, {}) };
}

const round = (x: number) => Math.round(x * 1e4) / 1e4;

/** The table as text, one row per dataset and the average: `mean [lo, hi]` per metric; a skipped column where setup skipped any question. */
export function formatTable(result: Pick<EvalResult, 'metrics' | 'datasets' | 'average'>): string {
  const f = (s: MetricSummary) => `${s.mean.toFixed(3)} [${s.lo.toFixed(3)}, ${s.hi.toFixed(3)}]`;
  const skips = [...result.datasets.values()].some((d) => d.skipped > 0);
  const rows: string[][] = [['dataset', 'n', 'errors', ...(skips ? ['skipped'] : []), ...result.metrics.map((m) => `${m} [95% CI]`)]];
  for (const [name, d] of result.datasets)
    rows.push([name, String(d.n), String(d.errors), ...(skips ? [String(d.skipped)] : []), ...result.metrics.map((m) => f(d.metrics[m]!))]);
  if (result.datasets.size > 1) rows.push(['average', '', '', ...(skips ? [''] : []), ...result.metrics.map((m) => f(result.average[m]!))]);
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')).join('\n');
}
