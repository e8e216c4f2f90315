import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { UserError } from '../util/user-error.ts';

/** A model path that is not a readable GGUF file; the message (without the path: callers name it) says what it is instead. */
export class GgufFileError extends UserError {
  override name = 'GgufFileError';
}

/**
 * Checks, before llama.cpp or the GGUF reader sees it, that `file` is a regular file starting with the
 * GGUF magic: a folder, a missing path or another kind of file is a one-line GgufFileError (llama.cpp
 * would answer with a stack trace, or a folder would read as an empty model).
 */
export function checkGgufFile(file: string): void {
  let size: number;
  try {
    const st = statSync(file);
    if (st.isDirectory()) throw new GgufFileError(`is a folder; give a .gguf model file`);
    if (!st.isFile()) throw new GgufFileError(`is not a regular file; give a .gguf model file`);
    size = st.size;
  } catch (e) {
    if (e instanceof GgufFileError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    throw new GgufFileError(code === 'ENOENT' || code === 'ENOTDIR' ? `no such file; give a .gguf model file (e.g. bench/tinylm/warm-start.gguf)` : `cannot read it (${code ?? (e as Error).message})`);
  }
  const head = Buffer.alloc(4);
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (e) {
    throw new GgufFileError(`cannot read it (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  try {
    readSync(fd, head, 0, 4, 0);
  } finally {
    closeSync(fd);
  }
  if (size < 4 || head.toString('latin1') !== 'GGUF') throw new GgufFileError(`is not a GGUF file (it does not start with "GGUF"); give a .gguf model file`);
}
