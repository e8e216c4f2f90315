import type { TopLevelSpec } from 'vega-lite';
import { byStrategy, isNum, mean, series, type SeriesPoint } from './aggregate.ts';
import type { RunData } from './load-runs.ts';
import { METRICS, metricInfo } from '../record/metrics.ts';
import { readStepDetails } from '../record/step-details.ts';

/** A chart ready for the page: an SVG, or a note saying why it is missing. */
export interface Chart {
  id: string;
  title: string;
  /** How to read it; metric meanings come from the METRICS registry. */
  caption: string;
  spec?: TopLevelSpec;
  note?: string;
}

const WIDTH = 380;
const HEIGHT = 220;

export function meaning(key: string): string {
  return metricInfo(key)?.meaning ?? key;
}

function colour(strategies: string[]) {
  return { field: 'strategy', type: 'nominal' as const, title: 'strategy', scale: { domain: strategies, scheme: 'tableau10' } };
}

/** Seed-mean line with a min–max band (the band is flat when one run has the strategy). */
function curveSpec(points: SeriesPoint[], strategies: string[], xTitle: string, yTitle: string, yDomain?: [number, number]): TopLevelSpec {
  const x = { field: 'x', type: 'quantitative' as const, title: xTitle };
  const yScale = yDomain ? { domain: yDomain } : { zero: false };
  return {
    width: WIDTH,
    height: HEIGHT,
    data: { values: points },
    layer: [
      {
        mark: { type: 'area', opacity: 0.18 },
        encoding: {
          x,
          y: { field: 'lo', type: 'quantitative', title: yTitle, scale: yScale },
          y2: { field: 'hi' },
          color: { ...colour(strategies), legend: null },
        },
      },
      {
        mark: { type: 'line', point: { size: 18 } },
        encoding: { x, y: { field: 'mean', type: 'quantitative', title: yTitle, scale: yScale }, color: colour(strategies) },
      },
    ],
  };
}

function curveChart(runs: RunData[], strategies: string[], y: string, x: string, yDomain?: [number, number]): Chart {
  const points = series(runs, y, x);
  const id = `${y}-vs-${x}`;
  const title = `${y} against ${x}`;
  const caption = `${y}: ${meaning(y)}. x: ${x === 'step' ? 'training step' : meaning(x)}. Line: mean over the strategy's seeds; band: min–max over seeds.`;
  if (points.length === 0) return { id, title, caption, note: `no run logged both ${y} and ${x}` };
  return { id, title, caption, spec: curveSpec(points, strategies, x, y, yDomain) };
}

/** How many of each run's last steps the calibration chart pools. */
export const CALIBRATION_LAST_STEPS = 5;

function calibrationChart(runs: RunData[], strategies: string[]): Chart {
  const id = 'calibration';
  const title = 'Predictor calibration (reliability diagram)';
  const caption =
    `Each point is a bin of predictions Ṽ pooled over the last ${CALIBRATION_LAST_STEPS} steps of every run of the strategy: ` +
    'x = mean Ṽ in the bin, y = observed success rate of the nodes in it (bottom-up targets), size = number of nodes. ' +
    'A calibrated predictor lies on the diagonal; points below it are over-confident. Roots and prefixes are shown apart. ' +
    `Brier score at roots: ${meaning('pred_root_brier')}.`;
  const rows: Array<{ strategy: string; kind: string; predicted: number; observed: number; count: number }> = [];
  for (const [strategy, group] of byStrategy(runs)) {
    for (const kind of ['root', 'prefix'] as const) {
      const pooled = new Map<string, { p: number; o: number; c: number }>();
      for (const run of group) {
        for (const s of run.steps.slice(-CALIBRATION_LAST_STEPS)) {
          for (const b of readStepDetails(s.details).reliability?.[kind] ?? []) {
            const key = `${b.lo}:${b.hi}`;
            const acc = pooled.get(key) ?? { p: 0, o: 0, c: 0 };
            acc.p += b.meanPredicted * b.count;
            acc.o += b.observed * b.count;
            acc.c += b.count;
            pooled.set(key, acc);
          }
        }
      }
      for (const acc of pooled.values()) rows.push({ strategy, kind, predicted: acc.p / acc.c, observed: acc.o / acc.c, count: acc.c });
    }
  }
  if (rows.length === 0) return { id, title, caption, note: 'no step stored details.reliability (root/prefix bins)' };
  const unit = { type: 'quantitative' as const, scale: { domain: [0, 1] } };
  return {
    id,
    title,
    caption,
    spec: {
      data: { values: rows },
      facet: { column: { field: 'kind', type: 'nominal', title: null, sort: ['root', 'prefix'] } },
      spec: {
        width: 240,
        height: 240,
        layer: [
          {
            data: { values: [{ a: 0 }, { a: 1 }] },
            mark: { type: 'line', color: '#999', strokeDash: [4, 4] },
            encoding: { x: { field: 'a', ...unit, title: 'mean predicted Ṽ' }, y: { field: 'a', ...unit, title: 'observed success' } },
          },
          {
            mark: { type: 'line', point: true, opacity: 0.8 },
            encoding: {
              x: { field: 'predicted', ...unit, title: 'mean predicted Ṽ' },
              y: { field: 'observed', ...unit, title: 'observed success' },
              color: colour(strategies),
              order: { field: 'predicted' },
            },
          },
          {
            mark: { type: 'circle', opacity: 0.5 },
            encoding: {
              x: { field: 'predicted', ...unit },
              y: { field: 'observed', ...unit },
              size: { field: 'count', type: 'quantitative', title: 'nodes' },
              color: colour(strategies),
            },
          },
        ],
      },
    },
  };
}

function budgetPerStepChart(runs: RunData[], strategies: string[]): Chart {
  const id = 'budget-per-step';
  const title = 'Where the budget went: bare rollouts vs continuations per step';
  const caption = `Stacked per step, mean over seeds. bare: ${meaning('cost_bare')}; continuation: ${meaning('cost_continuations')}. GRPO-like strategies spend everything on bare rollouts.`;
  const rows: Array<{ strategy: string; step: number; kind: string; count: number }> = [];
  for (const [kind, key] of [
    ['bare', 'cost_bare'],
    ['continuation', 'cost_continuations'],
  ] as const) {
    for (const p of series(runs, key, 'step')) rows.push({ strategy: p.strategy, step: p.step, kind, count: p.mean });
  }
  if (rows.length === 0) return { id, title, caption, note: 'no run logged cost_bare / cost_continuations' };
  const used = strategies.filter((s) => rows.some((r) => r.strategy === s));
  return {
    id,
    title,
    caption,
    spec: {
      data: { values: rows },
      facet: { field: 'strategy', type: 'nominal', title: null, sort: used },
      columns: 3,
      spec: {
        width: 220,
        height: 150,
        mark: 'bar',
        encoding: {
          x: { field: 'step', type: 'ordinal', title: 'step', axis: { labelOverlap: true } },
          y: { field: 'count', type: 'quantitative', title: 'trajectories', stack: 'zero' },
          color: { field: 'kind', type: 'nominal', title: 'rollout', scale: { domain: ['bare', 'continuation'], range: ['#4c78a8', '#f58518'] } },
        },
      },
    },
  };
}

function depthChart(runs: RunData[], strategies: string[]): Chart {
  const id = 'continuations-by-depth';
  const title = 'Continuations by prefix depth';
  const caption =
    'Continuations started after turn t, per step (mean over steps and seeds), from details.allocation.continuationsByDepth. Early prefixes branch whole strategies; late ones retry the final answer.';
  const rows: Array<{ strategy: string; depth: number; perStep: number }> = [];
  for (const [strategy, group] of byStrategy(runs)) {
    const totals = new Map<number, number>();
    let stepsSeen = 0;
    for (const run of group) {
      for (const s of run.steps) {
        const byDepth = readStepDetails(s.details).allocation?.continuationsByDepth;
        if (!byDepth) continue;
        stepsSeen++;
        for (const [d, n] of Object.entries(byDepth)) totals.set(Number(d), (totals.get(Number(d)) ?? 0) + n);
      }
    }
    for (const [depth, total] of totals) rows.push({ strategy, depth, perStep: total / stepsSeen });
  }
  if (rows.length === 0) return { id, title, caption, note: 'no step stored details.allocation.continuationsByDepth' };
  return {
    id,
    title,
    caption,
    spec: groupedBars(
      rows,
      strategies,
      { field: 'depth', title: 'prefix depth t (turns before branching)' },
      { field: 'perStep', title: 'continuations per step' },
    ),
  };
}

function rootAllocationChart(runs: RunData[], strategies: string[]): Chart {
  const id = 'root-allocation';
  const title = 'Root allocation: bare rollouts per prompt (m)';
  const caption =
    'Share of allocated prompts that received m bare rollouts, over all steps, from details.allocation.roots. Uniform allocation (GRPO) is one bar; TRACE spreads m by predicted difficulty.';
  const rows: Array<{ strategy: string; m: number; share: number }> = [];
  for (const [strategy, group] of byStrategy(runs)) {
    const counts = new Map<number, number>();
    let total = 0;
    for (const run of group) {
      for (const s of run.steps) {
        const roots = readStepDetails(s.details).allocation?.roots;
        for (const m of Object.values(roots ?? {})) {
          counts.set(m, (counts.get(m) ?? 0) + 1);
          total++;
        }
      }
    }
    for (const [m, c] of counts) rows.push({ strategy, m, share: c / total });
  }
  if (rows.length === 0) return { id, title, caption, note: 'no step stored details.allocation.roots' };
  return {
    id,
    title,
    caption,
    spec: groupedBars(
      rows,
      strategies,
      { field: 'm', title: 'm (bare rollouts of a prompt)' },
      { field: 'share', title: 'share of prompts', axis: { format: '%' } },
    ),
  };
}

/** Bars of an ordinal x, side by side per strategy. */
function groupedBars(rows: object[], strategies: string[], x: { field: string; title: string }, y: { field: string; title: string; axis?: object }) {
  return {
    width: WIDTH,
    height: HEIGHT,
    data: { values: rows },
    mark: 'bar' as const,
    encoding: {
      x: { ...x, type: 'ordinal' as const },
      xOffset: { field: 'strategy' },
      y: { ...y, type: 'quantitative' as const },
      color: colour(strategies),
    },
  };
}

function timeChart(runs: RunData[], strategies: string[]): Chart {
  const phases = METRICS.filter((m) => m.group === 'time' && m.key !== 'time_step_ms');
  const id = 'time-split';
  const title = 'Time split by phase (mean ms per step)';
  const caption = phases.map((p) => `${p.key}: ${p.meaning}`).join('; ') + '. "other" is time_step_ms minus the phases.';
  const rows: Array<{ strategy: string; phase: string; ms: number }> = [];
  for (const [strategy, group] of byStrategy(runs)) {
    const steps = group.flatMap((r) => r.steps);
    let phaseSum = 0;
    for (const p of phases) {
      const values = steps.map((s) => s.metrics[p.key]).filter(isNum);
      if (values.length === 0) continue;
      const ms = mean(values);
      phaseSum += ms;
      rows.push({ strategy, phase: p.key.replace(/^time_|_ms$/g, ''), ms });
    }
    const whole = steps.map((s) => s.metrics.time_step_ms).filter(isNum);
    if (whole.length && mean(whole) > phaseSum) rows.push({ strategy, phase: 'other', ms: mean(whole) - phaseSum });
  }
  if (rows.length === 0) return { id, title, caption, note: 'no run logged time_*_ms metrics' };
  return {
    id,
    title,
    caption,
    spec: {
      width: WIDTH,
      data: { values: rows },
      mark: 'bar',
      encoding: {
        y: { field: 'strategy', type: 'nominal', title: null, sort: strategies },
        x: { field: 'ms', type: 'quantitative', title: 'ms per step', stack: 'zero' },
        color: { field: 'phase', type: 'nominal', title: 'phase' },
      },
    },
  };
}

/** Every chart of the report, in page order. */
export function buildCharts(runs: RunData[]): Chart[] {
  const strategies = [...byStrategy(runs).keys()];
  return [
    curveChart(runs, strategies, 'test_accuracy', 'cum_trajectories', [0, 1]),
    curveChart(runs, strategies, 'test_accuracy', 'cum_tokens', [0, 1]),
    ...sampledCharts(runs, strategies),
    curveChart(runs, strategies, 'reward_mean', 'cum_trajectories', [0, 1]),
    curveChart(runs, strategies, 'reward_mean', 'cum_tokens', [0, 1]),
    curveChart(runs, strategies, 'effective_ratio', 'step', [0, 1]),
    calibrationChart(runs, strategies),
    budgetPerStepChart(runs, strategies),
    depthChart(runs, strategies),
    rootAllocationChart(runs, strategies),
    timeChart(runs, strategies),
    ...datasetCharts(runs, strategies),
  ];
}

/** Held-out success of sampled rollouts (eval.samples > 0), when some run logged it. */
function sampledCharts(runs: RunData[], strategies: string[]): Chart[] {
  if (!runs.some((r) => r.steps.some((st) => st.metrics.test_accuracy_sampled !== undefined))) return [];
  return [
    curveChart(runs, strategies, 'test_accuracy_sampled', 'cum_trajectories', [0, 1]),
    curveChart(runs, strategies, 'test_accuracy_sampled', 'cum_tokens', [0, 1]),
  ];
}

/** env qa: one held-out EM curve per dataset (keys eval_em/<dataset>), against trajectories spent. */
function datasetCharts(runs: RunData[], strategies: string[]): Chart[] {
  const keys = new Set<string>();
  for (const r of runs) for (const st of r.steps) for (const k of Object.keys(st.metrics)) if (k.startsWith('eval_em/')) keys.add(k);
  return [...keys].sort().map((k) => curveChart(runs, strategies, k, 'cum_trajectories', [0, 1]));
}
