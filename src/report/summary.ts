import { byStrategy, isNum, mean, series, type SeriesPoint } from './aggregate.ts';
import type { RunData } from './load-runs.ts';

/** Cost in the three units the spec asks every comparison to report (TRACE-SPEC §8). */
export interface Cost {
  trajectories: number | null;
  turns: number | null;
  tokens: number | null;
}

/** The headline numbers of one strategy; also returned by writeReport so the CLI can print them. */
export interface StrategySummary {
  strategy: string;
  runs: number;
  seeds: Array<number | null>;
  /** Mean over runs of the number of completed steps. */
  steps: number;
  /** Mean over runs of each run's last logged test accuracy; null when no run logged one. */
  finalTestAccuracy: number | null;
  /** Mean over steps, then over runs, of effective_ratio. */
  meanEffectiveRatio: number | null;
  /** Mean over runs of the run's total spend (last cum_* value). */
  totalCost: Cost;
  /** Cost at the first step where the strategy's seed-mean test accuracy reaches the target; null if never. */
  costToTarget: Cost | null;
  /**
   * The load a server environment carried for it, mean over runs of the whole run: environment steps
   * (generated and replayed: env_steps + env_replayed_steps) and seconds in the server's calls (env_ms);
   * null for an in-process environment. "Equal budget" in tokens can still mean unequal server load.
   */
  environment: { steps: number; seconds: number } | null;
}

/**
 * The fixed accuracy the cost-to-reach column uses: the best seed-mean test accuracy that the worst
 * strategy (lowest such best) reaches, so every strategy reaches it at least once.
 */
export interface AccuracyTarget {
  accuracy: number;
  /** The strategy that sets it. */
  setBy: string;
  rule: string;
}

export interface Summary {
  strategies: StrategySummary[];
  target: AccuracyTarget | null;
}

const COST_KEYS: ReadonlyArray<[keyof Cost, string]> = [
  ['trajectories', 'cum_trajectories'],
  ['turns', 'cum_turns'],
  ['tokens', 'cum_tokens'],
];

export function summarize(runs: RunData[]): Summary {
  const groups = byStrategy(runs);
  const accuracy = series(runs, 'test_accuracy', 'step');
  const target = accuracyTarget(accuracy);
  const strategies: StrategySummary[] = [];
  for (const [strategy, group] of groups) {
    const finals = group.map((r) => lastValue(r, 'test_accuracy')).filter(isNum);
    const ratios = group.map((r) => mean(r.steps.map((s) => s.metrics.effective_ratio).filter(isNum))).filter(isNum);
    strategies.push({
      strategy,
      runs: group.length,
      seeds: group.map((r) => r.seed),
      steps: mean(group.map((r) => r.steps.length)),
      finalTestAccuracy: finals.length ? mean(finals) : null,
      meanEffectiveRatio: ratios.length ? mean(ratios) : null,
      totalCost: costOf(group, (r) => r.steps.length - 1),
      costToTarget: target
        ? costToReach(
            group,
            accuracy.filter((p) => p.strategy === strategy),
            target.accuracy,
          )
        : null,
      environment: environmentLoad(group),
    });
  }
  return { strategies, target };
}

function accuracyTarget(points: SeriesPoint[]): AccuracyTarget | null {
  const best = new Map<string, number>();
  for (const p of points) best.set(p.strategy, Math.max(best.get(p.strategy) ?? -Infinity, p.mean));
  if (best.size === 0) return null;
  const [setBy, accuracy] = [...best].reduce((w, c) => (c[1] < w[1] ? c : w));
  return { accuracy, setBy, rule: 'the best seed-mean test accuracy reached by the strategy whose best is lowest' };
}

/** Mean over runs of cum_* at the first step where the seed-mean accuracy curve reaches `target`. */
function costToReach(group: RunData[], curve: SeriesPoint[], target: number): Cost | null {
  // A tiny tolerance so the strategy that sets the target reaches it despite float summation order.
  const hit = curve.find((p) => p.mean >= target - 1e-12);
  if (!hit) return null;
  return costOf(group, (r) => r.steps.findIndex((s) => s.step === hit.step));
}

function costOf(group: RunData[], index: (r: RunData) => number): Cost {
  const cost: Cost = { trajectories: null, turns: null, tokens: null };
  for (const [unit, key] of COST_KEYS) {
    const values = group
      .map((r) => {
        const i = index(r);
        return i >= 0 ? r.steps[i]?.metrics[key] : undefined;
      })
      .filter(isNum);
    cost[unit] = values.length ? mean(values) : null;
  }
  return cost;
}

/** Mean over the runs that logged a server's load of their totals (none logged: null). */
function environmentLoad(group: RunData[]): { steps: number; seconds: number } | null {
  const totals = group
    .filter((r) => r.steps.some((s) => isNum(s.metrics.env_steps)))
    .map((r) => {
      const sum = (key: string) => r.steps.reduce((a, s) => a + (isNum(s.metrics[key]) ? s.metrics[key] : 0), 0);
      return { steps: sum('env_steps') + sum('env_replayed_steps'), seconds: sum('env_ms') / 1000 };
    });
  if (totals.length === 0) return null;
  return { steps: mean(totals.map((t) => t.steps)), seconds: mean(totals.map((t) => t.seconds)) };
}

function lastValue(run: RunData, key: string): number | undefined {
  for (let i = run.steps.length - 1; i >= 0; i--) {
    const v = run.steps[i].metrics[key];
    if (isNum(v)) return v;
  }
  return undefined;
}
