/**
 * The model's end-of-turn token, which every sample sends as a stop (some engines never stop at EOS
 * by themselves, and a turn would run on to max_tokens past it). Its text comes from
 * `policy.endOfTurn`, else from the tokenizer's own config: Qwen3's `<|im_end|>` for `qwen3`,
 * `eos_token` of `tokenizer_config.json` for `hf:DIR`; `server` knows none (trace-rl serve's llama.cpp
 * stops at the model's EOS itself).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { loadQwen3Tokenizer, type Tokenizer } from '../../tokens/index.ts';
import { InputFileError, readTextFile } from '../../util/bounded-read.ts';
import { PolicyConfigError } from '../kind.ts';

const configSchema = z.looseObject({ eos_token: z.union([z.string(), z.looseObject({ content: z.string() })]).nullish() });

/** The end-of-turn text a `policy.tokenizer` spec names, when it names one. */
export function defaultEndOfTurn(tokenizer: string): string | undefined {
  if (tokenizer === 'qwen3') return loadQwen3Tokenizer().specialTokens.eos_token;
  if (!tokenizer.startsWith('hf:')) return undefined;
  const file = join(tokenizer.slice(3), 'tokenizer_config.json');
  if (!existsSync(file)) return undefined;
  let parsed;
  try {
    parsed = configSchema.safeParse(JSON.parse(readTextFile(file, { maxFileBytes: 16 * 1024 * 1024 })));
  } catch (e) {
    if (e instanceof InputFileError || e instanceof SyntaxError) throw new PolicyConfigError(`${file}: cannot read its eos_token (${e.message})`);
    throw e;
  }
  const eos = parsed.success ? parsed.data.eos_token : undefined;
  return typeof eos === 'string' ? eos : (eos?.content ?? undefined);
}

/** The token id of `text`, which must be one token of the model's tokenizer. */
export async function endOfTurnToken(text: string, tokenizer: Tokenizer): Promise<{ text: string; id: number }> {
  await tokenizer.prepare?.([text]);
  const ids = tokenizer.encode(text);
  if (ids.length !== 1)
    throw new PolicyConfigError(
      `policy.endOfTurn ${JSON.stringify(text)} is ${ids.length} tokens of ${tokenizer.name}, not one; give the model's end-of-turn token (e.g. <|im_end|> for Qwen3)`,
    );
  return { text, id: ids[0]! };
}
