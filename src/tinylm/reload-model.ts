import { resolve } from 'node:path';
import { HttpError } from '../http/index.ts';
import { checkGgufFile, GgufFileError } from './gguf-file.ts';
import type { LlamaEngine } from './llama-engine.ts';

/**
 * `POST /reload`'s loader. The header is checked by our reader first, so a header bomb is a quick
 * 400 instead of llama.cpp allocating for its counts. The answer never carries llama.cpp's message:
 * it can quote the file's first bytes (a copy of /etc/passwd answered `got "root"`), and the client
 * may not be the one who owns the files; the server's own stderr gets the details.
 */
export async function reloadModel(file: string, load: () => Promise<LlamaEngine>): Promise<LlamaEngine> {
  try {
    checkGgufFile(resolve(file));
  } catch (e) {
    if (e instanceof GgufFileError) throw new HttpError(400, `model ${file}: ${e.message}`, 'invalid_model', 'model');
    throw e;
  }
  try {
    return await load();
  } catch (e) {
    process.stderr.write(`trace-rl serve: /reload ${file}: llama.cpp could not load it (${String((e as Error).message).split('\n')[0]})\n`);
    throw new HttpError(400, `model ${file}: llama.cpp could not load it (the server's log says why)`, 'invalid_model', 'model');
  }
}
