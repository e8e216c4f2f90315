/**
 * The one way this project reads an input file it did not write itself (datasets, corpora, JSON data
 * files): only a regular file, at most `maxFileBytes` in all and `maxLineBytes` a line, read in chunks.
 * Without it, `--datasets /dev/zero` read forever into one string (8 GB in 9 s), and a FIFO blocked
 * the process. Every refusal is one line naming the file (and line) and what to do instead. A file
 * named `*.gz` is read through gzip, bounded by what it expands to.
 */
import { closeSync, constants, existsSync, fstatSync, openSync, readSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { UserError } from './user-error.ts';
import type { JsonLine } from './json-lines.ts';

export interface ReadLimits {
  /** Largest file accepted, in bytes. */
  maxFileBytes: number;
  /** Longest line accepted, in bytes (its newline not counted). */
  maxLineBytes: number;
}

/**
 * Dataset-sized defaults. The longest bundled line is 22 KB (a MuSiQue question with its 20
 * paragraphs) and the largest bundled file 4 MB (GSM8K train); full public splits stay well under
 * both limits, while a file beyond them would be held as parsed objects several times its size.
 */
export const DATASET_LIMITS: ReadLimits = { maxFileBytes: 256 * 1024 * 1024, maxLineBytes: 4 * 1024 * 1024 };

/** A file that cannot be read as input; `line` is 0 when the problem is the file as a whole. */
export class InputFileError extends UserError {
  override name = 'InputFileError';
  constructor(
    readonly file: string,
    readonly line: number,
    readonly reason: string,
  ) {
    super(line > 0 ? `${file}:${line}: ${reason}` : `${file}: ${reason}`);
  }
}

/** A byte count as MiB for messages: `256 MiB`, `0.5 MiB`. */
export const mib = (n: number) => `${(n / (1024 * 1024)).toLocaleString('en', { maximumFractionDigits: 1 })} MiB`;

/**
 * Opens `file` for reading and checks it is a regular file no larger than `maxFileBytes`. Opened
 * non-blocking so a FIFO is refused instead of waiting for a writer; the type is checked on the open
 * descriptor, so a path swapped after a stat cannot slip a device in.
 */
function openRegular(file: string, maxFileBytes: number): { fd: number; size: number } {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EACCES'
          ? 'permission denied'
          : code === 'ENOTDIR'
            ? 'a part of the path is a file, not a folder'
            : `cannot open it (${code ?? (e as Error).message})`;
    throw new InputFileError(file, 0, `${why}; give a readable file`);
  }
  const st = fstatSync(fd);
  const kind = st.isDirectory()
    ? 'a folder'
    : st.isCharacterDevice() || st.isBlockDevice()
      ? 'a device'
      : st.isFIFO()
        ? 'a pipe (FIFO)'
        : st.isSocket()
          ? 'a socket'
          : st.isFile()
            ? undefined
            : 'not a regular file';
  if (kind !== undefined) {
    closeSync(fd);
    throw new InputFileError(file, 0, `is ${kind}, not a regular file; give a file (a pipe or device could be read without end)`);
  }
  if (st.size > maxFileBytes) {
    closeSync(fd);
    throw new InputFileError(file, 0, `is ${mib(st.size)}, over the ${mib(maxFileBytes)} limit for one input file; split it or keep only the rows you need`);
  }
  return { fd, size: st.size };
}

/**
 * The whole of a regular file as UTF-8 text (for JSON documents, which are not read by line); a
 * `.gz` file is expanded, within the same limit.
 */
export function readTextFile(file: string, limits: Pick<ReadLimits, 'maxFileBytes'> = DATASET_LIMITS): string {
  if (file.endsWith('.gz')) return Buffer.concat([...gunzipped(file, { maxFileBytes: limits.maxFileBytes, maxLineBytes: Infinity })]).toString('utf8');
  return readTextFileBytes(file, limits.maxFileBytes).toString('utf8');
}

/** The bytes of a regular file of at most `maxFileBytes`. */
function readTextFileBytes(file: string, maxFileBytes: number): Buffer {
  const { fd, size } = openRegular(file, maxFileBytes);
  try {
    // Read at most the size fstat reported (plus one byte, to notice a file that is still growing).
    const buf = Buffer.alloc(size + 1);
    let got = 0;
    for (;;) {
      const n = readSync(fd, buf, got, buf.length - got, null);
      if (n === 0) break;
      got += n;
      if (got > size) throw new InputFileError(file, 0, `grew while it was being read; read it when it is complete`);
    }
    return buf.subarray(0, got);
  } finally {
    closeSync(fd);
  }
}

/**
 * `file` itself when it exists, else `file.gz` when that exists (the repository commits its larger
 * data files compressed, while a user's copy of the same data is usually plain); else `file`, so the
 * reader's error names the plain path.
 */
export function plainOrGz(file: string): string {
  return existsSync(file) || !existsSync(`${file}.gz`) ? file : `${file}.gz`;
}

/** One line of a file: its 1-based number and its text (without the newline or a trailing \r). */
export interface TextLine {
  line: number;
  text: string;
}

/**
 * The lines of a regular file, read in 64 KiB chunks: memory stays within one line and one chunk,
 * and a line longer than `maxLineBytes` (a binary file, a file without newlines) is refused by number.
 */
export function* readLines(file: string, limits: ReadLimits = DATASET_LIMITS): Generator<TextLine> {
  if (file.endsWith('.gz')) {
    yield* splitLines(file, gunzipped(file, limits), limits);
    return;
  }
  const { fd } = openRegular(file, limits.maxFileBytes);
  try {
    const chunk = Buffer.alloc(64 * 1024);
    let total = 0;
    yield* splitLines(
      file,
      (function* () {
        for (;;) {
          const n = readSync(fd, chunk, 0, chunk.length, null);
          if (n === 0) return;
          total += n;
          if (total > limits.maxFileBytes)
            throw new InputFileError(file, 0, `grew past the ${mib(limits.maxFileBytes)} limit while it was being read; read it when it is complete`);
          yield chunk.subarray(0, n);
        }
      })(),
      limits,
    );
  } finally {
    closeSync(fd);
  }
}

/**
 * A gzip file's contents in 64 KiB pieces. The compressed file is bounded like any input, and so is
 * what it expands to (`maxOutputLength`): a small file that inflates without end (a gzip bomb) is
 * refused, not held.
 */
function* gunzipped(file: string, limits: ReadLimits): Generator<Buffer> {
  const packed = readTextFileBytes(file, limits.maxFileBytes);
  let data: Buffer;
  try {
    data = gunzipSync(packed, { maxOutputLength: limits.maxFileBytes });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ERR_BUFFER_TOO_LARGE' || /too large|maxOutputLength/i.test((e as Error).message))
      throw new InputFileError(
        file,
        0,
        `expands to more than the ${mib(limits.maxFileBytes)} limit for one input file; split it or keep only the rows you need`,
      );
    throw new InputFileError(file, 0, `is not a valid gzip file (${(e as Error).message}); give a .gz made by gzip, or the plain file`);
  }
  for (let at = 0; at < data.length; at += 64 * 1024) yield data.subarray(at, at + 64 * 1024);
}

/** Lines out of a stream of chunks (each valid until the next is asked for), within `maxLineBytes`. */
function* splitLines(file: string, chunks: Iterable<Buffer>, limits: ReadLimits): Generator<TextLine> {
  let parts: Buffer[] = [];
  let partBytes = 0;
  let line = 1;
  const take = (tail: Buffer): TextLine => {
    const bytes = parts.length === 0 ? tail : Buffer.concat([...parts, tail]);
    parts = [];
    partBytes = 0;
    const text = bytes.toString('utf8');
    return { line: line++, text: text.endsWith('\r') ? text.slice(0, -1) : text };
  };
  for (const chunk of chunks) {
    const n = chunk.length;
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      const end = nl < 0 ? n : nl;
      if (partBytes + (end - start) > limits.maxLineBytes)
        throw new InputFileError(file, line, `line longer than ${mib(limits.maxLineBytes)}; each line must be one record (is this a text file?)`);
      if (nl < 0) {
        // Copied: the chunk's memory is reused by the next read.
        if (end > start) parts.push(Buffer.from(chunk.subarray(start, end)));
        partBytes += end - start;
        break;
      }
      yield take(chunk.subarray(start, end));
      start = nl + 1;
    }
  }
  if (partBytes > 0) yield take(Buffer.alloc(0));
}

/**
 * The non-empty lines of a JSON Lines file, each parsed (the same items as {@link jsonLines} gives
 * for text in memory), read through {@link readLines}' limits. `parse` replaces JSON.parse for a
 * caller that needs another JSON reader (BFCL's keeps Python's int/float distinction).
 */
export function* readJsonLinesFile(file: string, limits: ReadLimits = DATASET_LIMITS, parse: (text: string) => unknown = JSON.parse): Generator<JsonLine> {
  for (const { line, text } of readLines(file, limits)) {
    const t = text.trim();
    if (t.length === 0) continue;
    try {
      yield { line, value: parse(t) };
    } catch (e) {
      yield { line, error: (e as Error).message };
    }
  }
}
