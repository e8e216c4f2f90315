/** Runs on disk: one SQLite file per run folder, one transaction per step, resumable. */
export * from './run-store.ts';
