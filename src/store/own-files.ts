/**
 * The files that make a folder a run. Commands that write an output next to runs (export, report)
 * check their --out against them: `export RUN --out RUN/run.sqlite` used to replace the run's database
 * with Parquet rows and exit 0.
 */
import { realpathSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { CREATING_MARKER, LOCK_FILE, RunStoreError } from './run-dir.ts';
import { RUN_DB } from './run-store.ts';
import { METRICS_CSV, METRICS_JSONL, METRICS_TFEVENTS } from './metrics-log.ts';

/** The database, SQLite’s side files for it, the writer’s lock, the creating marker and the metrics stream. */
export const RUN_OWN_FILES = [
  RUN_DB,
  `${RUN_DB}-wal`,
  `${RUN_DB}-shm`,
  `${RUN_DB}-journal`,
  LOCK_FILE,
  CREATING_MARKER,
  METRICS_JSONL,
  METRICS_CSV,
  METRICS_TFEVENTS,
] as const;

function realpathOr(p: string): string | undefined {
  try {
    return realpathSync(p);
  } catch {
    return undefined;
  }
}

/** Where a path would land once symlinks are followed: the file itself, or its (resolved) folder plus its name. */
function landing(p: string): string {
  return realpathOr(p) ?? join(realpathOr(dirname(resolve(p))) ?? dirname(resolve(p)), basename(p));
}

function identity(p: string): string | undefined {
  try {
    const st = statSync(p);
    return `${st.dev}:${st.ino}`;
  } catch {
    return undefined;
  }
}

/** The run file `out` would overwrite (same path after symlinks, or the same inode: a hard link), if any. */
export function runFileAt(out: string, runDirs: readonly string[]): string | undefined {
  const target = landing(out);
  const id = identity(out);
  for (const dir of runDirs) {
    const home = realpathOr(dir) ?? resolve(dir);
    for (const name of RUN_OWN_FILES) {
      const own = join(home, name);
      if (own === target || (id !== undefined && identity(own) === id)) return own;
    }
  }
  return undefined;
}

/** Refuses an output that is one of the runs' own files, before anything is written. */
export function refuseRunFile(out: string, runDirs: readonly string[], flag = '--out'): void {
  const own = runFileAt(out, runDirs);
  if (own !== undefined)
    throw new RunStoreError(`${flag} ${out}: is one of the run's own files (${own}); writing it would destroy the run, choose another file`);
}
