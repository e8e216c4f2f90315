import { randomBytes } from 'node:crypto';
import { closeSync, constants, lstatSync, openSync, readlinkSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { UserError } from '../util/user-error.ts';
import { refuseForeignOutput, type OutputSignature } from './own-output.ts';

/** A path that must not be replaced by a file (a FIFO, a device, a folder…); one line for the user. */
export class AtomicWriteError extends UserError {
  override name = 'AtomicWriteError';
}

export interface AtomicWriteOptions {
  /**
   * What the command writes: an existing file at the destination is replaced only when it looks like
   * that (a rerun's earlier output), checked again here, just before the write.
   */
  replaces?: OutputSignature;
  /** The flag that named the path, for the refusal (default --out). */
  flag?: string;
}

/**
 * Writes `data` to `path` so that a reader never sees half a file: a temporary file beside the
 * destination, renamed over it. Only a regular file (or a new path) is replaced; a symbolic link is
 * followed and its target replaced (the link stays a link). FIFOs, devices, sockets and folders are
 * refused: renaming over them would silently swap a `/dev/full` or a named pipe for a plain file.
 *
 * The temporary file's name is random and it is created exclusively without following links, so
 * nobody can plant a symlink at the name beforehand and have the data written (and then renamed)
 * somewhere outside the output folder; a name already taken fails instead of being used or removed.
 */
export function writeFileAtomic(path: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): void {
  const { target, tmp, fd } = openTemporary(path, options);
  try {
    try {
      writeFileSync(fd, data);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, target);
  } catch (e) {
    throw failed(e, path, tmp);
  }
}

/**
 * As `writeFileAtomic`, for data produced a piece at a time (a Parquet file's row groups): each chunk
 * is written as it comes, so the whole file is never in memory, and the file appears under its name
 * only once the last chunk is written. A source that throws leaves nothing behind.
 */
export async function writeFileAtomicFrom(path: string, chunks: AsyncIterable<Uint8Array>, options: AtomicWriteOptions = {}): Promise<void> {
  const { target, tmp, fd } = openTemporary(path, options);
  try {
    try {
      for await (const chunk of chunks) writeFileSync(fd, chunk);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, target);
  } catch (e) {
    throw failed(e, path, tmp);
  }
}

/** The temporary file beside the destination, created exclusively without following links. */
function openTemporary(path: string, options: AtomicWriteOptions): { target: string; tmp: string; fd: number } {
  const target = writableTarget(path);
  if (options.replaces) refuseForeignOutput(path, options.replaces, options.flag);
  const tmp = `${target}.tmp-${randomBytes(8).toString('hex')}`;
  try {
    return { target, tmp, fd: openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o666) };
  } catch (e) {
    // Not created, so nothing to remove (a name already taken is somebody else's file).
    throw namePath(e, path, tmp);
  }
}

/** Removes the temporary file this write created and names the user's path in the error. */
function failed(e: unknown, path: string, tmp: string): unknown {
  rmSync(tmp, { force: true });
  return namePath(e, path, tmp);
}

function namePath(e: unknown, path: string, tmp: string): unknown {
  // Name the user's path, not the temporary file's, in the one-line error; a failed write(2) (a
  // full disk) carries no path at all, and "ENOSPC: write" alone does not say which file.
  const err = e as NodeJS.ErrnoException;
  if (e instanceof Error && (err.path === undefined || err.path === tmp)) err.path = path;
  return e;
}

/** The regular-file path a write to `path` replaces: `path` itself, or the end of its symlink chain. */
function writableTarget(path: string): string {
  let at = resolve(path);
  for (let hops = 0; hops < 40; hops++) {
    let st;
    try {
      st = lstatSync(at);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return at;
      throw e;
    }
    if (st.isSymbolicLink()) {
      at = resolve(dirname(at), readlinkSync(at));
      continue;
    }
    if (st.isFile()) return at;
    throw new AtomicWriteError(`${path}: ${kindOf(at)}, not a regular file; trace-rl only replaces regular files (or a symlink's target): choose a file path`);
  }
  throw new AtomicWriteError(`${path}: too many symbolic links`);
}

function kindOf(path: string): string {
  const st = statSync(path);
  if (st.isDirectory()) return 'is a folder';
  if (st.isFIFO()) return 'is a named pipe (FIFO)';
  if (st.isCharacterDevice()) return 'is a character device';
  if (st.isBlockDevice()) return 'is a block device';
  if (st.isSocket()) return 'is a socket';
  return 'is not a regular file';
}
