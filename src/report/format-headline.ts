import type { ReportResult } from './write-report.ts';

function n(v: number | null | undefined, digits = 3): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '-';
  return Math.abs(v) >= 1000 ? String(Math.round(v)) : String(Number(v.toFixed(digits)));
}

/**
 * The report's headline as plain text lines (for the CLI and for `compare` to print at the end):
 * where the report is, the accuracy target, and one aligned row per strategy.
 */
export function formatHeadline(result: ReportResult): string {
  const { summary } = result;
  const lines = [`report: ${result.out} (${Math.round(result.bytes / 1024)} KB, ${result.runs} run${result.runs === 1 ? '' : 's'})`];
  if (summary.target) lines.push(`target accuracy ${n(summary.target.accuracy)}: ${summary.target.rule} (${summary.target.setBy})`);
  // A server environment's load beside the tokens: the columns appear when a run logged one.
  const served = summary.strategies.some((s) => s.environment !== null);
  const header = [
    'strategy',
    'runs',
    'final_acc',
    'eff_ratio',
    'trajectories',
    'turns',
    'tokens',
    ...(served ? ['env_steps', 'env_s'] : []),
    'traj_to_target',
    'tokens_to_target',
  ];
  const rows = summary.strategies.map((s) => [
    s.strategy,
    String(s.runs),
    n(s.finalTestAccuracy),
    n(s.meanEffectiveRatio),
    n(s.totalCost.trajectories),
    n(s.totalCost.turns),
    n(s.totalCost.tokens),
    ...(served ? [n(s.environment?.steps), n(s.environment?.seconds, 1)] : []),
    s.costToTarget ? n(s.costToTarget.trajectories) : 'never',
    s.costToTarget ? n(s.costToTarget.tokens) : 'never',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  for (const r of [header, ...rows]) lines.push(r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  '));
  for (const note of result.notes) lines.push(`note: ${note}`);
  return lines.join('\n');
}
