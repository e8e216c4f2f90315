import { lstatSync, readlinkSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { UserError } from '../util/user-error.ts';

/** A path that must not be replaced by a file (a FIFO, a device, a folder…); one line for the user. */
export class AtomicWriteError extends UserError {
  override name = 'AtomicWriteError';
}

/**
 * Writes `data` to `path` so that a reader never sees half a file: a temporary file beside the
 * destination, renamed over it. Only a regular file (or a new path) is replaced; a symbolic link is
 * followed and its target replaced (the link stays a link). FIFOs, devices, sockets and folders are
 * refused: renaming over them would silently swap a `/dev/full` or a named pipe for a plain file.
 */
export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  const target = writableTarget(path);
  const tmp = `${target}.tmp-${process.pid}`;
  try {
    writeFileSync(tmp, data);
    renameSync(tmp, target);
  } catch (e) {
    rmSync(tmp, { force: true });
    // Name the user's path, not the temporary file's, in the one-line error.
    if ((e as NodeJS.ErrnoException).path === tmp) (e as NodeJS.ErrnoException).path = path;
    throw e;
  }
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
