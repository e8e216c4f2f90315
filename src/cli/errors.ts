/** What an operating-system error code means for the user, and what to do. */
const OS_ERRORS: Record<string, string> = {
  ENOENT: 'no such file or folder',
  ENOTDIR: 'a part of the path is a file, not a folder; choose a path inside a folder',
  EISDIR: 'is a folder; give a file',
  EACCES: 'permission denied; choose a path you can write, or fix its permissions',
  EPERM: 'operation not permitted; choose another path',
  EROFS: 'read-only file system; choose a path on a writable disk',
  ENOSPC: 'no space left on the device; free some space (a stopped run continues with --resume)',
  EDQUOT: 'disk quota exceeded; free some space',
  EEXIST: 'already exists; choose another path',
  EMFILE: 'too many open files; raise the limit (ulimit -n)',
  ENAMETOOLONG: 'file name too long; choose a shorter path',
  ELOOP: 'too many symbolic links; check the path',
  EBUSY: 'busy (in use by another process)',
  ETXTBSY: 'busy (in use by another process)',
};

/** SQLite result codes a user can act on. */
const SQLITE_ERRORS: Record<string, string> = {
  SQLITE_FULL: 'the disk is full (SQLite: database or disk is full); free some space, then continue with --resume: the last completed step is kept',
  SQLITE_READONLY: 'the run database is read-only; check its permissions or the file system',
  SQLITE_CANTOPEN: 'cannot open the run database; check that the folder exists and is writable',
  SQLITE_NOTADB: 'the file is not a SQLite database (damaged, or another program’s file)',
  SQLITE_CORRUPT: 'the run database is damaged',
  SQLITE_IOERR: 'an I/O error while writing the run database (disk full or failing?)',
  SQLITE_BUSY: 'the run database is in use by another process',
};

/**
 * The one stderr line for an operating-system or SQLite error the user can act on (a full disk, a
 * read-only file system, a path through a file…), or undefined for anything else (a real bug, which
 * keeps its stack trace). Errors the program raises on purpose are UserErrors and never get here.
 */
export function systemErrorLine(e: unknown): string | undefined {
  if (!(e instanceof Error)) return undefined;
  const code = (e as NodeJS.ErrnoException).code;
  if (typeof code !== 'string') return undefined;
  if (code in SQLITE_ERRORS || code.startsWith('SQLITE_IOERR')) return SQLITE_ERRORS[code] ?? SQLITE_ERRORS.SQLITE_IOERR;
  const meaning = OS_ERRORS[code];
  if (meaning === undefined) return undefined;
  const path = (e as NodeJS.ErrnoException).path;
  return path ? `${path}: ${meaning}` : `${e.message.split('\n')[0]}: ${meaning}`;
}
