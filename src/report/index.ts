/**
 * The HTML report of one or more runs: learning curves against cost, effective ratio, predictor
 * calibration, where the budget went, time per phase, a summary table per strategy, and a rollout-tree
 * viewer. One self-contained file (inline CSS, SVG rendered in Node by vega-lite, one inline script).
 */
export { writeReport, type WriteReportOptions, type ReportResult } from './write-report.ts';
export type { Summary, StrategySummary, Cost, AccuracyTarget } from './summary.ts';
export { ReportError } from './errors.ts';
export { formatHeadline } from './format-headline.ts';
export { renderEvalPage, writeEvalPage, type EvalPageInput } from './eval-page.ts';
