import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RUN_DB, RunStore } from '../../src/store/index.ts';
import { getNode, isMixed, leaves, root, type RolloutTree } from '../../src/tree/index.ts';
import { meanOf } from './stats.ts';

/** One accuracy evaluation of a run, with the cost spent up to it (the three units). */
export interface EvalPoint {
  step: number;
  accuracy: number;
  trajectories: number;
  turns: number;
  tokens: number;
}

/** What the benchmark reads from one finished (or partly finished) run folder. */
export interface RunStats {
  dir: string;
  seed: number;
  steps: number;
  finished: boolean;
  /** effective_ratio per step (index = step). */
  ratio: number[];
  /** Mixed prompt trees per step: effective_ratio · prompts (comparable at equal cost). */
  mixed: number[];
  prompts: number[];
  anchorYield: number[];
  expanded: number[];
  /** Trajectories (bare + continuations) spent per step. */
  spent: number[];
  continuationShare: number;
  /** Greedy held-out evaluations (test_accuracy). */
  evals: EvalPoint[];
  /** Sampled held-out evaluations (test_accuracy_sampled; runs with eval.samples > 0, else empty). */
  sampledEvals: EvalPoint[];
  /** Exact J on the training prompts (train_accuracy_exact; runs whose policy supplies the truth, else empty; absent in older records). */
  exactEvals?: EvalPoint[];
  total: { trajectories: number; turns: number; tokens: number };
  wallSeconds: number;
}

export function loadRun(dir: string): RunStats | null {
  if (!existsSync(join(dir, RUN_DB))) return null;
  const store = RunStore.open(dir, { readonly: true });
  try {
    const config = store.config<{ seed: number }>();
    const steps = store.steps();
    if (steps.length === 0) return null;
    const m = (k: string) => steps.map((s) => s.metrics[k] ?? NaN);
    const ratio = m('effective_ratio');
    const prompts = m('prompts');
    const last = steps[steps.length - 1].metrics;
    const bare = meanOf(m('cost_bare')) * steps.length;
    const cont = meanOf(m('cost_continuations')) * steps.length;
    return {
      dir,
      seed: config.seed,
      steps: steps.length,
      finished: store.status() === 'finished',
      ratio,
      mixed: ratio.map((r, i) => r * prompts[i]),
      prompts,
      anchorYield: m('mixed_anchor_yield'),
      expanded: m('expanded_prefixes'),
      spent: steps.map((s) => (s.metrics.cost_bare ?? 0) + (s.metrics.cost_continuations ?? 0)),
      continuationShare: cont / (bare + cont),
      evals: evalPoints(steps, 'test_accuracy'),
      sampledEvals: evalPoints(steps, 'test_accuracy_sampled'),
      exactEvals: evalPoints(steps, 'train_accuracy_exact'),
      total: { trajectories: last.cum_trajectories, turns: last.cum_turns, tokens: last.cum_tokens },
      wallSeconds: (meanOf(m('time_step_ms')) * steps.length) / 1000,
    };
  } finally {
    store.close();
  }
}

type PerStep = Pick<RunStats, 'anchorYield' | 'prompts' | 'expanded' | 'spent'>;

/** Mixed anchors per step: yield × (selected roots + expanded prefixes). */
export function mixedAnchors(r: PerStep): number[] {
  return r.anchorYield.map((y, i) => y * (r.prompts[i]! + r.expanded[i]!));
}

/** A per-step count summed over the run, per 100 trajectories spent (contrast per unit of budget). */
export function per100(r: PerStep, xs: readonly number[]): number {
  return (
    (100 * xs.reduce((a, b) => a + (Number.isFinite(b) ? b : 0), 0)) /
    Math.max(
      1,
      r.spent.reduce((a, b) => a + b, 0),
    )
  );
}

/**
 * A run's numbers as a small JSON record (<out>/records/<label>-s<seed>.json, written by analyse), so the
 * paired tables survive the run folder: run folders are not committed and a machine is not kept.
 */
export interface RunRecord extends Omit<RunStats, 'dir'> {
  label: string;
  /** Where the numbers came from when not written by analyse from a run folder (e.g. transcribed from an earlier table). */
  source?: string;
}

export function toRecord(label: string, r: RunStats): RunRecord {
  const { dir: _dir, ...rest } = r;
  return { label, ...rest };
}

/**
 * A record as committed: one line, every non-integer to 6 significant digits. Most of a record is
 * per-step ratios of small counts, which JSON would print to 17 digits; rounded, a final's 120 records take
 * about half the space (tracked files are capped at 15 MB), and every table prints 3 digits at most.
 */
export function recordText(record: RunRecord): string {
  return JSON.stringify(record, (_k, v) => (typeof v === 'number' && Number.isFinite(v) && !Number.isInteger(v) ? Number(v.toPrecision(6)) : v)) + '\n';
}

/** Reads a record; JSON has no NaN, so the nulls it wrote for missing metrics become NaN again. */
export function readRecord(path: string): RunRecord {
  return JSON.parse(readFileSync(path, 'utf8'), (_k, v) => (v === null ? NaN : v)) as RunRecord;
}

function evalPoints(steps: ReadonlyArray<{ step: number; metrics: Record<string, number> }>, key: string): EvalPoint[] {
  return steps.flatMap((s) =>
    Number.isFinite(s.metrics[key])
      ? [{ step: s.step, accuracy: s.metrics[key]!, trajectories: s.metrics.cum_trajectories!, turns: s.metrics.cum_turns!, tokens: s.metrics.cum_tokens! }]
      : [],
  );
}

/** Where a run's bare rollouts went, by question kind, and how often a selected prompt had no prefix to expand. */
export interface KindUse {
  /** kind → [bare rollouts, prompts selected, prompts mixed]. */
  byKind: Map<string, [number, number, number]>;
  /** Selected prompts whose bare rollouts all ended after one turn (nothing to expand). */
  noPrefix: number;
  selected: number;
}

export function kindUse(dir: string, stepsToRead: readonly number[], kindOf: (promptId: string) => string): KindUse {
  const store = RunStore.open(dir, { readonly: true });
  const use: KindUse = { byKind: new Map(), noPrefix: 0, selected: 0 };
  try {
    for (const step of stepsToRead) {
      for (const tree of store.trees(step)) addTree(use, tree, kindOf(tree.promptId));
    }
  } finally {
    store.close();
  }
  return use;
}

function addTree(use: KindUse, tree: RolloutTree, kind: string): void {
  const bareChildren = root(tree)
    .children.map((id) => getNode(tree, id))
    .filter((n) => n.origin === 'bare');
  if (bareChildren.length === 0) return;
  const bareLeaves = leaves(tree).filter((l) => l.origin === 'bare');
  const row = use.byKind.get(kind) ?? [0, 0, 0];
  row[0] += bareLeaves.length;
  row[1] += 1;
  row[2] += isMixed(tree) ? 1 : 0;
  use.byKind.set(kind, row);
  use.selected++;
  if (bareLeaves.every((l) => l.depth <= 1)) use.noPrefix++;
}
