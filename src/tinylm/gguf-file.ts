import { closeSync, openSync, statSync } from 'node:fs';
import { checkGgufHeader, GgufHeaderError } from './gguf-header.ts';
import { UserError } from '../util/user-error.ts';

/** A model path that is not a readable GGUF file; the message (without the path: callers name it) says what it is instead. */
export class GgufFileError extends UserError {
  override name = 'GgufFileError';
}

/**
 * Checks, before llama.cpp or the GGUF reader sees it, that `file` is a regular file holding a GGUF
 * header whose counts and lengths fit the file and whose tensors' data lies inside it (gguf-header.ts).
 * A folder, a missing path, another kind of file, a header bomb or a truncated model is one
 * GgufFileError line (llama.cpp would allocate for the claimed counts, print its own log lines, or
 * answer with a stack trace). No message repeats the file's bytes.
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
    throw new GgufFileError(
      code === 'ENOENT' || code === 'ENOTDIR'
        ? `no such file; give a .gguf model file (e.g. bench/tinylm/warm-start.gguf)`
        : `cannot read it (${code ?? (e as Error).message})`,
    );
  }
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (e) {
    throw new GgufFileError(`cannot read it (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  try {
    checkGgufHeader(fd, size);
  } catch (e) {
    if (!(e instanceof GgufHeaderError)) throw e;
    throw new GgufFileError(/^is not a GGUF file/.test(e.message) ? `${e.message}; give a .gguf model file` : `not a usable GGUF model: ${e.message}`);
  } finally {
    closeSync(fd);
  }
}
