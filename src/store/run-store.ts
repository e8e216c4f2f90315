import Database from 'better-sqlite3';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TreeRecord } from '../record/tree-record.ts';
import type { RolloutTree } from '../tree/types.ts';
import { decodeTree, encodeTree } from './tree-codec.ts';
import { CREATING_MARKER, makeRunDir, missingFolders, removeFile, removeFolders, RunLock, RunStoreError } from './run-dir.ts';

export { RunStoreError };

/**
 * A run is a folder holding `run.sqlite`: configuration, one row per completed step (metrics and
 * spend), that step's trees, and the checkpoints needed to resume it. Every step is written in one
 * transaction, so a kill at any moment loses at most the step in progress and never leaves half a
 * step behind (SQLite WAL + synchronous=FULL).
 */

export const RUN_DB = 'run.sqlite';
/** Meta rows that hold a command's notes (RunStore.note) start with this. */
const NOTE_PREFIX = 'note.';
/**
 * 2: trees are stored in the binary tree format (tree-codec.ts); 1: as JSON text. This version reads
 * both; a version-1 run opened for writing is marked 2 before its first binary row, so an older
 * trace-rl refuses it by its version instead of failing on a row.
 */
const SCHEMA_VERSION = 2;
const READABLE_VERSIONS = ['1', '2'];
/** Added after schema version 1 without changing it: older readers ignore it, older runs lack it. */
const TREE_RECORDS_TABLE =
  'CREATE TABLE tree_records (step INTEGER NOT NULL, prompt_id TEXT NOT NULL, rendered TEXT NOT NULL, advantages TEXT NOT NULL, PRIMARY KEY (step, prompt_id))';

/** What one completed step leaves in the store. */
export interface StepRecord {
  step: number;
  metrics: Record<string, number>;
  /** Arbitrary JSON-able details (spend, phase times, allocation summary…). */
  details: Record<string, unknown>;
  trees: RolloutTree[];
  /** Per tree: the prompt text the policy saw and the advantages used (readers then need no environment). */
  treeRecords?: TreeRecord[];
  /** Opaque checkpoints by name ('policy', 'predictor', 'state', …) to resume after this step. */
  checkpoints: Record<string, Uint8Array>;
}

export type RunStatus = 'running' | 'finished';

/** Which command made the run: `train` runs resume with train; `rollout` runs belong to an external trainer. */
export type RunKind = 'train' | 'rollout';

export class RunStore {
  readonly dir: string;
  private db: Database.Database;
  private readonly lock?: RunLock;
  /** Folders this process created for a new run (outermost first), for `discard`. */
  private readonly createdFolders?: string[];

  private constructor(dir: string, db: Database.Database, lock?: RunLock, createdFolders?: string[]) {
    this.dir = dir;
    this.db = db;
    this.lock = lock;
    this.createdFolders = createdFolders;
  }

  /**
   * Checks that `dir` can hold a new run, without changing anything: an existing complete run, a
   * folder path through a file, or an unwritable parent is a RunStoreError. (`create` does the same
   * checks; callers use this to fail before printing or building anything.) `resumable`: whether the
   * command has `--resume` to offer (`rollout` has not).
   */
  static checkNew(dir: string, resumable = true): void {
    const file = join(dir, RUN_DB);
    if (missingFolders(dir).length > 0) return;
    if (!existsSync(file)) return;
    if (isComplete(file))
      throw new RunStoreError(`${file} already exists: ${resumable ? `resume it with --resume ${dir}, or choose another --out` : 'choose another --out'}`);
    if (!existsSync(join(dir, CREATING_MARKER))) throw notOurs(dir);
  }

  /**
   * Creates a new run folder and takes its lock. A `run.sqlite` left by this program's interrupted
   * start (the creating marker proves it) is replaced; any other existing file is refused, never
   * deleted.
   */
  static create(dir: string, config: unknown, options: { kind?: RunKind; configRevision?: number; notes?: Record<string, unknown> } = {}): RunStore {
    RunStore.checkNew(dir);
    const created = makeRunDir(dir);
    let lock: RunLock | undefined;
    const file = join(dir, RUN_DB);
    const marker = join(dir, CREATING_MARKER);
    try {
      lock = RunLock.acquire(dir);
      RunStore.checkNew(dir); // again under the lock: another process may have created it meanwhile
      if (existsSync(file)) for (const f of [file, `${file}-wal`, `${file}-shm`]) removeFile(f); // ours: the marker is there
      writeFileSync(marker, `${process.pid}\n`);
      const db = openDb(file);
      try {
        // Schema and meta in one transaction (SQLite DDL is transactional): a kill leaves all or nothing.
        db.transaction(() => {
          db.exec(`
            CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
            CREATE TABLE steps (step INTEGER PRIMARY KEY, metrics TEXT NOT NULL, details TEXT NOT NULL);
            CREATE TABLE trees (step INTEGER NOT NULL, prompt_id TEXT NOT NULL, tree BLOB NOT NULL, PRIMARY KEY (step, prompt_id));
            CREATE TABLE checkpoints (step INTEGER NOT NULL, name TEXT NOT NULL, data BLOB NOT NULL, PRIMARY KEY (step, name));
            ${TREE_RECORDS_TABLE};
          `);
          const put = db.prepare('INSERT INTO meta (key, value) VALUES (?, ?)');
          put.run('schema_version', String(SCHEMA_VERSION));
          put.run('config', JSON.stringify(config));
          put.run('status', 'running');
          put.run('kind', options.kind ?? 'train');
          if (options.configRevision !== undefined) put.run('config_revision', String(options.configRevision));
          for (const [key, value] of Object.entries(options.notes ?? {})) put.run(`${NOTE_PREFIX}${key}`, JSON.stringify(value));
        })();
      } catch (e) {
        db.close();
        throw e;
      }
      removeFile(marker);
      return new RunStore(dir, db, lock, created);
    } catch (e) {
      // Nothing half-made stays behind: the files and folders this call created go.
      if (existsSync(marker)) for (const f of [file, `${file}-wal`, `${file}-shm`, marker]) removeFile(f);
      lock?.release();
      removeFolders(created);
      throw storeError(e, dir, 'creating');
    }
  }

  /** Opens an existing run folder; writers (not `readonly`) take its lock. */
  static open(dir: string, options: { readonly?: boolean } = {}): RunStore {
    const file = join(dir, RUN_DB);
    if (!existsSync(file)) throw new RunStoreError(`${file} not found: is ${dir} a run folder (made by trace-rl train --out)?`);
    if (!isComplete(file)) {
      if (existsSync(join(dir, CREATING_MARKER)))
        throw new RunStoreError(
          `${file} never finished being created (the start was interrupted); start the run again with --out ${dir} (this replaces only that unfinished file)`,
        );
      throw notOurs(dir);
    }
    const lock = options.readonly ? undefined : RunLock.acquire(dir);
    try {
      const db = openDb(file, options.readonly);
      const version = (db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get() as { value: string } | undefined)?.value;
      if (version === undefined || !READABLE_VERSIONS.includes(version)) {
        db.close();
        throw new RunStoreError(
          `${file} has schema version ${version}, this trace-rl reads ${READABLE_VERSIONS.join(' and ')}: open it with the trace-rl that wrote it`,
        );
      }
      if (!options.readonly) {
        if (version !== String(SCHEMA_VERSION)) db.prepare("UPDATE meta SET value = ? WHERE key = 'schema_version'").run(String(SCHEMA_VERSION));
        removeFile(join(dir, CREATING_MARKER)); // a kill between commit and removal leaves it
        // Runs made before tree records existed get the table on their next write; their older steps have none.
        db.exec(`${TREE_RECORDS_TABLE.replace('CREATE TABLE', 'CREATE TABLE IF NOT EXISTS')};`);
      }
      return new RunStore(dir, db, lock);
    } catch (e) {
      lock?.release();
      throw storeError(e, dir, 'opening');
    }
  }

  /**
   * Which revision of the configuration's meaning the run was made with (the caller's own numbering;
   * runs from before this field are revision 1), so that a reader can keep an old run's settings
   * meaning what they meant when it was made.
   */
  configRevision(): number {
    return Number(this.meta('config_revision') ?? 1);
  }

  /** Which command made this run (runs from before this field are train runs). */
  kind(): RunKind {
    return (this.meta('kind') as RunKind | undefined) ?? 'train';
  }

  /** Replaces the stored configuration (a resumed run that was given, e.g., more steps). */
  updateConfig(config: unknown): void {
    this.db.prepare("UPDATE meta SET value = ? WHERE key = 'config'").run(JSON.stringify(config));
  }

  /** Marks a finished run as running again (more steps were asked for). */
  markRunning(): void {
    this.db.prepare("UPDATE meta SET value = 'running' WHERE key = 'status'").run();
  }

  /**
   * Removes a run this process created and that has no completed step (a start that failed): its
   * database, its lock and the folders `create` made. Anything else in the folder is left alone.
   */
  discard(): void {
    if (!this.createdFolders || this.lastStep() >= 0) return this.close();
    const file = join(this.dir, RUN_DB);
    this.db.close();
    for (const f of [file, `${file}-wal`, `${file}-shm`]) removeFile(f);
    this.lock?.release();
    removeFolders(this.createdFolders);
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

  /** Writes a whole step atomically; a full disk is a RunStoreError (the run resumes once there is space). */
  writeStep(record: StepRecord): void {
    try {
      this.writeStepTransaction(record);
    } catch (e) {
      // Before the first step is stored a failed start is removed (train's discard), so say "start again".
      throw storeError(e, this.dir, this.lastStep() >= 0 ? 'writing' : 'creating');
    }
  }

  private writeStepTransaction(record: StepRecord): void {
    const insStep = this.db.prepare('INSERT INTO steps (step, metrics, details) VALUES (?, ?, ?)');
    const insTree = this.db.prepare('INSERT INTO trees (step, prompt_id, tree) VALUES (?, ?, ?)');
    const insRecord = this.db.prepare('INSERT INTO tree_records (step, prompt_id, rendered, advantages) VALUES (?, ?, ?, ?)');
    const insCkpt = this.db.prepare('INSERT INTO checkpoints (step, name, data) VALUES (?, ?, ?)');
    const dropOld = this.db.prepare('DELETE FROM checkpoints WHERE step < ?');
    this.db.transaction(() => {
      insStep.run(record.step, JSON.stringify(record.metrics), JSON.stringify(record.details));
      for (const t of record.trees) insTree.run(record.step, t.promptId, encodeTree(t));
      for (const r of record.treeRecords ?? []) insRecord.run(record.step, r.promptId, r.rendered, JSON.stringify(r.advantages));
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
    const rows = this.db.prepare('SELECT tree FROM trees WHERE step = ? ORDER BY rowid').all(step) as Array<{ tree: Buffer | string }>;
    return rows.map((r) => decodeTree(r.tree));
  }

  /**
   * The step's tree records in the order of its trees; empty for a step stored before they existed (or
   * written without them).
   */
  treeRecords(step: number): TreeRecord[] {
    const table = this.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'tree_records'").get();
    if (!table) return [];
    const rows = this.db.prepare('SELECT prompt_id, rendered, advantages FROM tree_records WHERE step = ? ORDER BY rowid').all(step) as Array<{
      prompt_id: string;
      rendered: string;
      advantages: string;
    }>;
    return rows.map((r) => ({ promptId: r.prompt_id, rendered: r.rendered, advantages: JSON.parse(r.advantages) as TreeRecord['advantages'] }));
  }

  /**
   * A note a command keeps with the run beside its configuration (JSON): what it needs to resume or
   * export the run as it was made (rollout's tokenizer options), or what a service acknowledged per step
   * (`atropos.step.<n>`). Undefined when none was written.
   */
  note<T = unknown>(key: string): T | undefined {
    const v = this.meta(`${NOTE_PREFIX}${key}`);
    return v === undefined ? undefined : (JSON.parse(v) as T);
  }

  /** Writes (or replaces) a note at once, in its own transaction. */
  writeNote(key: string, value: unknown): void {
    this.db
      .prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value')
      .run(`${NOTE_PREFIX}${key}`, JSON.stringify(value));
  }

  close(): void {
    if (this.db.open) this.db.close();
    this.lock?.release();
  }

  private meta(key: string): string | undefined {
    return (this.db.prepare('SELECT value FROM meta WHERE key = ?').get(key) as { value: string } | undefined)?.value;
  }
}

function notOurs(dir: string): RunStoreError {
  return new RunStoreError(
    `${join(dir, RUN_DB)} does not read as a trace-rl run (damaged, or another program's database) and trace-rl did not leave it there, so nothing was changed: restore it from a backup, or choose another --out`,
  );
}

/** SQLite errors a user can act on (a full disk, a read-only file system) as one RunStoreError line. */
function storeError(e: unknown, dir: string, doing: 'creating' | 'opening' | 'writing'): unknown {
  if (e instanceof RunStoreError) return e;
  const code = (e as { code?: unknown }).code;
  if (typeof code !== 'string') return e;
  const file = join(dir, RUN_DB);
  if (code === 'SQLITE_FULL' || code === 'ENOSPC')
    return new RunStoreError(
      `${file}: the disk is full while ${doing} the run; free some space${doing === 'writing' ? `, then continue with --resume ${dir} (the last completed step is kept)` : ' and start again'}`,
    );
  if (code === 'SQLITE_READONLY' || code === 'EROFS')
    return new RunStoreError(`${file}: read-only (file system or permissions) while ${doing} the run; choose a writable --out`);
  if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT') return notOurs(dir);
  if (code.startsWith('SQLITE_IOERR') || code === 'SQLITE_CANTOPEN')
    return new RunStoreError(`${file}: I/O error while ${doing} the run (${(e as Error).message}); check the disk`);
  return e;
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
