import Database from 'better-sqlite3';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { RolloutTree } from '../tree/types.ts';
import { UserError } from '../util/user-error.ts';

/**
 * A run is a folder holding `run.sqlite`: configuration, one row per completed step (metrics and
 * spend), that step's trees, and the checkpoints needed to resume it. Every step is written in one
 * transaction, so a kill at any moment loses at most the step in progress and never leaves half a
 * step behind (SQLite WAL + synchronous=FULL).
 */

export const RUN_DB = 'run.sqlite';
const SCHEMA_VERSION = 1;

export class RunStoreError extends UserError {
  override name = 'RunStoreError';
}

/** What one completed step leaves in the store. */
export interface StepRecord {
  step: number;
  metrics: Record<string, number>;
  /** Arbitrary JSON-able details (spend, phase times, allocation summary…). */
  details: Record<string, unknown>;
  trees: RolloutTree[];
  /** Opaque checkpoints by name ('policy', 'predictor', 'state', …) to resume after this step. */
  checkpoints: Record<string, Uint8Array>;
}

export type RunStatus = 'running' | 'finished';

export class RunStore {
  readonly dir: string;
  private db: Database.Database;

  private constructor(dir: string, db: Database.Database) {
    this.dir = dir;
    this.db = db;
  }

  /** Creates a new run folder; refuses to reuse one that already holds a run. */
  static create(dir: string, config: unknown): RunStore {
    const file = join(dir, RUN_DB);
    if (existsSync(file)) {
      if (isComplete(file)) throw new RunStoreError(`${file} already exists: resume it with --resume ${dir}, or choose another --out`);
      // A start killed before its first commit leaves a file without a run in it: nothing to keep.
      for (const f of [file, `${file}-wal`, `${file}-shm`]) rmSync(f, { force: true });
    }
    mkdirSync(dir, { recursive: true });
    const db = openDb(file);
    // Schema and meta in one transaction (SQLite DDL is transactional): a kill leaves all or nothing.
    db.transaction(() => {
      db.exec(`
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE steps (step INTEGER PRIMARY KEY, metrics TEXT NOT NULL, details TEXT NOT NULL);
        CREATE TABLE trees (step INTEGER NOT NULL, prompt_id TEXT NOT NULL, tree TEXT NOT NULL, PRIMARY KEY (step, prompt_id));
        CREATE TABLE checkpoints (step INTEGER NOT NULL, name TEXT NOT NULL, data BLOB NOT NULL, PRIMARY KEY (step, name));
      `);
      const put = db.prepare('INSERT INTO meta (key, value) VALUES (?, ?)');
      put.run('schema_version', String(SCHEMA_VERSION));
      put.run('config', JSON.stringify(config));
      put.run('status', 'running');
    })();
    return new RunStore(dir, db);
  }

  /** Opens an existing run folder. */
  static open(dir: string, options: { readonly?: boolean } = {}): RunStore {
    const file = join(dir, RUN_DB);
    if (!existsSync(file)) throw new RunStoreError(`${file} not found: is ${dir} a run folder (made by trace-rl train --out)?`);
    if (!isComplete(file)) throw new RunStoreError(`${file} never finished being created (the start was interrupted); start the run again with --out ${dir}`);
    const db = openDb(file, options.readonly);
    const version = (db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get() as { value: string } | undefined)?.value;
    if (version !== String(SCHEMA_VERSION)) throw new RunStoreError(`${file} has schema version ${version}, this trace-rl reads ${SCHEMA_VERSION}`);
    return new RunStore(dir, db);
  }

  config<T = unknown>(): T {
    return JSON.parse(this.meta('config')!) as T;
  }

  status(): RunStatus {
    return this.meta('status') as RunStatus;
  }

  markFinished(): void {
    this.db.prepare("UPDATE meta SET value = 'finished' WHERE key = 'status'").run();
  }

  /** The last completed step, or -1 when none. */
  lastStep(): number {
    const row = this.db.prepare('SELECT MAX(step) AS s FROM steps').get() as { s: number | null };
    return row.s ?? -1;
  }

  /** Writes a whole step atomically. */
  writeStep(record: StepRecord): void {
    const insStep = this.db.prepare('INSERT INTO steps (step, metrics, details) VALUES (?, ?, ?)');
    const insTree = this.db.prepare('INSERT INTO trees (step, prompt_id, tree) VALUES (?, ?, ?)');
    const insCkpt = this.db.prepare('INSERT INTO checkpoints (step, name, data) VALUES (?, ?, ?)');
    const dropOld = this.db.prepare('DELETE FROM checkpoints WHERE step < ?');
    this.db.transaction(() => {
      insStep.run(record.step, JSON.stringify(record.metrics), JSON.stringify(record.details));
      for (const t of record.trees) insTree.run(record.step, t.promptId, JSON.stringify(t));
      for (const [name, data] of Object.entries(record.checkpoints)) insCkpt.run(record.step, name, Buffer.from(data));
      // Only the latest checkpoints are needed to resume; older ones would grow the file without bound.
      dropOld.run(record.step);
    })();
  }

  checkpoints(step: number): Record<string, Uint8Array> {
    const rows = this.db.prepare('SELECT name, data FROM checkpoints WHERE step = ?').all(step) as Array<{ name: string; data: Buffer }>;
    return Object.fromEntries(rows.map((r) => [r.name, new Uint8Array(r.data)]));
  }

  steps(): Array<{ step: number; metrics: Record<string, number>; details: Record<string, unknown> }> {
    const rows = this.db.prepare('SELECT step, metrics, details FROM steps ORDER BY step').all() as Array<{ step: number; metrics: string; details: string }>;
    return rows.map((r) => ({ step: r.step, metrics: JSON.parse(r.metrics), details: JSON.parse(r.details) }));
  }

  trees(step: number): RolloutTree[] {
    const rows = this.db.prepare('SELECT tree FROM trees WHERE step = ? ORDER BY rowid').all(step) as Array<{ tree: string }>;
    return rows.map((r) => JSON.parse(r.tree) as RolloutTree);
  }

  close(): void {
    this.db.close();
  }

  private meta(key: string): string | undefined {
    return (this.db.prepare('SELECT value FROM meta WHERE key = ?').get(key) as { value: string } | undefined)?.value;
  }
}

/** True when the file holds a committed run (meta with a config), false for an interrupted creation. */
function isComplete(file: string): boolean {
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
    const hasMeta = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").get();
    return Boolean(hasMeta && db.prepare("SELECT 1 FROM meta WHERE key = 'config'").get());
  } catch {
    return false;
  } finally {
    db?.close();
  }
}

function openDb(file: string, readonly = false): Database.Database {
  const db = new Database(file, { readonly, fileMustExist: readonly });
  if (!readonly) {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
  }
  return db;
}
