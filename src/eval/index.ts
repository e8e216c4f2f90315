/**
 * Evaluation of any policy on any environment kind's held-out questions (`trace-rl eval`): per-kind
 * metrics, resumable result folders, tables with 95 % intervals and the `--json` shape.
 */
export * from './stats.ts';
export * from './eval-store.ts';
export * from './harness.ts';
export * from './held-out.ts';
