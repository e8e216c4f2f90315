/** Runs on disk: one SQLite file per run folder, one transaction per step, resumable. */
export * from './run-store.ts';
export { writeFileAtomic, writeFileAtomicFrom, AtomicWriteError, type AtomicWriteOptions } from './atomic-write.ts';
export { refuseForeignOutput, ForeignOutputError, containsText, startsWithText, type OutputSignature } from './own-output.ts';
export { CREATING_MARKER, LOCK_FILE } from './run-dir.ts';
export { refuseRunFile, runFileAt, RUN_OWN_FILES } from './own-files.ts';
export { MetricsLog, METRICS_JSONL, METRICS_CSV, METRICS_TFEVENTS } from './metrics-log.ts';
export { crc32c, maskedCrc } from './tfevents.ts';
