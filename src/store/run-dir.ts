import { accessSync, closeSync, constants, mkdirSync, openSync, readFileSync, rmdirSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { UserError } from '../util/user-error.ts';

/** A run folder problem, as one line naming the path and the fix. */
export class RunStoreError extends UserError {
  override name = 'RunStoreError';
}

/**
 * Present while a run is being created and removed once its first transaction commits: it proves that
 * a `run.sqlite` which is not a complete run was left by this program's interrupted start, and may be
 * removed. Without it, nothing in a folder is ever deleted.
 */
export const CREATING_MARKER = '.trace-rl-creating';

/** Holds the PID of the process writing the run. */
export const LOCK_FILE = 'run.lock';

const OS_REASONS: Record<string, string> = {
  EROFS: 'read-only file system',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOSPC: 'no space left on the device',
  ENOTDIR: 'a part of the path is a file, not a folder',
  ENOENT: 'the file system does not allow creating files here',
  EEXIST: 'a file of that name is in the way',
};

function reason(e: unknown): string {
  const code = (e as NodeJS.ErrnoException).code ?? '';
  return OS_REASONS[code] ?? (e as Error).message;
}

/**
 * Creates the run folder and any missing parents one level at a time, after checking that the nearest
 * existing ancestor is a writable folder (Node's recursive mkdir loops forever under /proc, and
 * reports a read-only file system as ENOENT). Returns the folders it created, outermost first, so a
 * failed start can remove exactly those.
 */
export function makeRunDir(dir: string): string[] {
  const missing = missingFolders(dir);
  const created: string[] = [];
  for (const d of missing) {
    try {
      mkdirSync(d);
    } catch (e) {
      removeFolders(created);
      throw new RunStoreError(`${dir}: cannot create the folder ${d} (${reason(e)}); choose a writable location`);
    }
    created.push(d);
  }
  return created;
}

/**
 * The folders of `dir` that do not exist yet (outermost first), after checking that its nearest
 * existing ancestor is a folder this process can write in. Changes nothing.
 */
export function missingFolders(dir: string): string[] {
  const missing: string[] = [];
  let at = resolve(dir);
  for (;;) {
    let st;
    try {
      st = statSync(at);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOTDIR') throw new RunStoreError(`${dir}: a part of the path is a file, not a folder; choose a path inside a folder`);
      if (code !== 'ENOENT') throw new RunStoreError(`${dir}: cannot inspect ${at} (${reason(e)})`);
      missing.unshift(at);
      const up = dirname(at);
      if (up === at) throw new RunStoreError(`${dir}: no existing folder above it`);
      at = up;
      continue;
    }
    if (!st.isDirectory()) throw new RunStoreError(`${dir}: ${at} is ${st.isFile() ? 'a file' : 'not a folder'}; choose a path inside a folder`);
    try {
      accessSync(at, constants.W_OK | constants.X_OK);
      // access() passes for root on read-only or virtual file systems (/proc): try for real.
      const probe = join(at, `.trace-rl-probe-${process.pid}`);
      mkdirSync(probe);
      rmdirSync(probe);
    } catch (e) {
      throw new RunStoreError(`${dir}: cannot write in ${at} (${reason(e)}); choose a writable location`);
    }
    return missing;
  }
}

/** Removes folders this process created (innermost first), only while they are empty. */
export function removeFolders(created: readonly string[]): void {
  for (const d of [...created].reverse()) {
    try {
      rmdirSync(d);
    } catch {
      return; // not empty (or gone): keep it and its parents
    }
  }
}

/** Removes a file if present; never follows into folders. */
export function removeFile(file: string): void {
  try {
    unlinkSync(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
}

/**
 * An exclusive claim on a run folder: `run.lock` created with O_EXCL holding this process's PID. A
 * second writer sees the PID and stops; a lock whose process is gone (killed) is taken over.
 */
export class RunLock {
  private constructor(private readonly file: string) {}

  /** `what` and `then` word the busy message for the folder's kind (a run, or an evaluation). */
  static acquire(dir: string, what = 'run', then = 'resume'): RunLock {
    const file = join(dir, LOCK_FILE);
    for (let attempt = 0; attempt < 2; attempt++) {
      let fd: number;
      try {
        fd = openSync(file, 'wx');
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw new RunStoreError(`${dir}: cannot create ${LOCK_FILE} (${reason(e)})`);
        const holder = Number.parseInt(readSafe(file), 10);
        if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && alive(holder)) {
          throw new RunStoreError(`${dir} is busy: process ${holder} is writing this ${what} (${file}); wait for it to finish or stop it, then ${then}`);
        }
        removeFile(file); // stale: its process is gone
        continue;
      }
      try {
        writeSync(fd, `${process.pid}\n`);
      } finally {
        closeSync(fd);
      }
      return new RunLock(file);
    }
    throw new RunStoreError(`${dir}: could not take ${LOCK_FILE}; another process keeps creating it`);
  }

  release(): void {
    if (Number.parseInt(readSafe(this.file), 10) === process.pid) removeFile(this.file);
  }
}

function readSafe(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
