import { InputFileError, readTextFile } from '../../util/bounded-read.ts';
import { UserError } from '../../util/user-error.ts';

/**
 * Where an OpenAI-compatible server's API key comes from, first found wins: the file named by
 * policy.apiKeyFile (its first line), then the environment variables below. Never a flag (it would
 * stay in the shell history and the process list) and never the configuration itself, which is
 * stored in the run: only the file's path is stored, and the key is held by the client alone.
 */
export const API_KEY_VARIABLES = ['TRACE_RL_API_KEY', 'OPENAI_API_KEY'] as const;

/** A key file cannot be read or holds no key; the message names the file and what to do. */
export class ApiKeyError extends UserError {
  override name = 'ApiKeyError';
}

/** An API key file is one short line; anything larger is not one. */
const MAX_KEY_FILE_BYTES = 64 * 1024;

/** The key and where it came from (a variable's name or the file's path, never the key), or none. */
export function resolveApiKey(options: {
  file?: string;
  env: Readonly<Record<string, string | undefined>>;
  /** Variables to read, first found wins (default API_KEY_VARIABLES); another service's key has its own. */
  variables?: readonly string[];
  /** The setting or flag that named the file, for messages (default policy.apiKeyFile). */
  setting?: string;
}): { key: string; source: string } | undefined {
  const setting = options.setting ?? 'policy.apiKeyFile';
  if (options.file !== undefined) {
    let text: string;
    try {
      text = readTextFile(options.file, { maxFileBytes: MAX_KEY_FILE_BYTES });
    } catch (e) {
      if (e instanceof InputFileError) throw new ApiKeyError(`${setting}: ${e.message}`);
      throw e;
    }
    const key = text.split(/\r?\n/)[0]!.trim();
    if (key === '') throw new ApiKeyError(`${setting} ${options.file}: the first line is empty; write the API key on it`);
    return { key, source: options.file };
  }
  for (const name of options.variables ?? API_KEY_VARIABLES) {
    const key = options.env[name]?.trim();
    if (key) return { key, source: name };
  }
  return undefined;
}
