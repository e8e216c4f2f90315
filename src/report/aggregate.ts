import type { RunData } from './load-runs.ts';

/** One point of a strategy's curve: mean over the runs (seeds) that logged `y` at this step, with min–max. */
export interface SeriesPoint {
  strategy: string;
  step: number;
  /** Mean of the x metric over the same runs (cost differs between seeds when the budget unit is another). */
  x: number;
  mean: number;
  lo: number;
  hi: number;
  /** How many runs contributed. */
  n: number;
}

/** Runs grouped by strategy, strategies in a stable (sorted) order so colours match across charts. */
export function byStrategy(runs: RunData[]): Map<string, RunData[]> {
  const groups = new Map<string, RunData[]>();
  for (const r of [...runs].sort((a, b) => a.strategy.localeCompare(b.strategy) || (a.seed ?? 0) - (b.seed ?? 0))) {
    const g = groups.get(r.strategy) ?? [];
    g.push(r);
    groups.set(r.strategy, g);
  }
  return groups;
}

/**
 * Per strategy and step: mean, min and max of metric `y` over the strategy's runs, placed at the mean
 * of metric `x` (or at the step number when `x` is 'step'). Steps where no run logged `y` are left out
 * (test accuracy is logged only every few steps).
 */
export function series(runs: RunData[], y: string, x: string | 'step' = 'step'): SeriesPoint[] {
  const out: SeriesPoint[] = [];
  for (const [strategy, group] of byStrategy(runs)) {
    const atStep = new Map<number, Array<{ x: number; y: number }>>();
    for (const run of group) {
      for (const s of run.steps) {
        const yv = s.metrics[y];
        const xv = x === 'step' ? s.step : s.metrics[x];
        if (!isNum(yv) || !isNum(xv)) continue;
        const list = atStep.get(s.step) ?? [];
        list.push({ x: xv, y: yv });
        atStep.set(s.step, list);
      }
    }
    for (const step of [...atStep.keys()].sort((a, b) => a - b)) {
      const pts = atStep.get(step)!;
      const ys = pts.map((p) => p.y);
      out.push({ strategy, step, x: mean(pts.map((p) => p.x)), mean: mean(ys), lo: Math.min(...ys), hi: Math.max(...ys), n: pts.length });
    }
  }
  return out;
}

export function isNum(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v);
}

export function mean(xs: number[]): number {
  return xs.length === 0 ? NaN : xs.reduce((a, b) => a + b, 0) / xs.length;
}
