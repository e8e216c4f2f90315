/**
 * Outputs replace only what their own command wrote. `export A --out B/run.sqlite` used to replace
 * another run's database with rows and exit 0: `refuseRunFile` only knows the runs named on the
 * command line. A command that writes one file (export, report, diagnose --html) describes what its
 * output looks like; an existing file that does not look like it is refused before anything is written,
 * whatever it is (another run's database, a config, someone's notes).
 */
import { closeSync, fstatSync, openSync, readSync, realpathSync, statSync } from 'node:fs';
import { UserError } from '../util/user-error.ts';

/** How a command recognises a file it wrote earlier (so a rerun may replace it). */
export interface OutputSignature {
  /** What the command writes, for the refusal: "rows or a prefix trie written by trace-rl export". */
  what: string;
  /** Whether a file with these first and last bytes (at most `ENDS` each) is such an output. */
  matches(head: Uint8Array, tail: Uint8Array, size: number): boolean;
}

/** Bytes read from each end of an existing file: enough for a Parquet footer or a JSON line's first keys. */
export const ENDS = 1 << 16;

/** An existing file the command did not write; one line for the user (exit 2). */
export class ForeignOutputError extends UserError {
  override name = 'ForeignOutputError';
}

/**
 * Throws when `out` exists (following symlinks) as a regular file that `signature` does not
 * recognise. A missing path is fine (a new file); anything but a regular file is left to the writer,
 * which refuses it with its own message.
 */
export function refuseForeignOutput(out: string, signature: OutputSignature, flag = '--out'): void {
  let fd: number;
  try {
    if (!statSync(out).isFile()) return;
    fd = openSync(out, 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw e;
  }
  let ours: boolean;
  try {
    const size = fstatSync(fd).size;
    const head = new Uint8Array(Math.min(size, ENDS));
    const tail = new Uint8Array(Math.min(size, ENDS));
    readFully(fd, head, 0);
    readFully(fd, tail, size - tail.length);
    ours = size > 0 && signature.matches(head, tail, size);
  } finally {
    closeSync(fd);
  }
  if (ours) return;
  const real = realpathOr(out);
  const via = real !== undefined && real !== out ? ` (${real})` : '';
  throw new ForeignOutputError(
    `${flag} ${out}${via}: exists and is not ${signature.what}; trace-rl never replaces a file it did not write: choose another ${flag} (or remove that file yourself)`,
  );
}

function readFully(fd: number, into: Uint8Array, position: number): void {
  let at = 0;
  while (at < into.length) {
    const n = readSync(fd, into, at, into.length - at, position + at);
    if (n === 0) break;
    at += n;
  }
}

function realpathOr(p: string): string | undefined {
  try {
    return realpathSync(p);
  } catch {
    return undefined;
  }
}

/** `text` at the very start of `bytes`. */
export function startsWithText(bytes: Uint8Array, text: string): boolean {
  const want = new TextEncoder().encode(text);
  if (bytes.length < want.length) return false;
  for (let i = 0; i < want.length; i++) if (bytes[i] !== want[i]) return false;
  return true;
}

/** `text` anywhere in `bytes`. */
export function containsText(bytes: Uint8Array, text: string): boolean {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).includes(text, 0, 'utf8');
}
