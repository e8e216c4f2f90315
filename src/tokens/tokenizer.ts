/**
 * Tokenizers: text ↔ ids. The OpenAI policy's token mode encodes prompts and observations with the
 * model's own tokenizer and sends ids; export encodes text that has no ids (prompts, observations,
 * turns of text-only policies). Ids a policy server returned (`turn.tokens`) are never re-tokenised.
 * Built in: `bytes` and `codepoints` (exact round trip, not a model's ids); the model's tokenizers
 * live in hf-tokenizer.ts (a local Hugging Face folder, Qwen3's files) and server-tokenizer.ts.
 */

export interface Tokenizer {
  /** Written into every export's metadata so a reader knows how to decode the ids. */
  readonly name: string;
  /**
   * Ids of `text`, no special tokens added (special-token text such as `<|im_start|>` maps to its id).
   * Always a new array the caller owns: token mode appends a rollout's turns to a prompt's ids.
   */
  encode(text: string): number[];
  decode(ids: readonly number[]): string;
  /** Id the model expects before a prompt (llama's `<s>`); undefined when none (Qwen). */
  readonly bos?: number;
  /**
   * Tokenizers that ask a server answer `encode`/`decode` from a cache: `prepare` fills it (one
   * round trip per new text or id list) before synchronous code such as export reads it.
   */
  prepare?(texts: readonly string[], idLists?: readonly (readonly number[])[]): Promise<void>;
}

/** Raised for ids a tokenizer cannot decode (out of its vocabulary). */
export class TokenizerError extends Error {
  override name = 'TokenizerError';
}

/**
 * Ids 0–2 are reserved (`<unk>`, `<s>`, `</s>`) as in the SPM byte vocabulary of llama-style GGUF
 * models, so byte b has id b + 3 — the same ids as that vocabulary's `<0xNN>` byte tokens.
 */
export const BYTE_ID_OFFSET = 3;

const utf8 = new TextEncoder();
const utf8Strict = new TextDecoder('utf-8', { fatal: true });

/** One id per UTF-8 byte: id = byte + 3. Every string round-trips exactly; the vocabulary is 259 ids. */
export const byteTokenizer: Tokenizer = {
  name: 'bytes+3',
  encode(text) {
    const bytes = utf8.encode(text);
    const ids = new Array<number>(bytes.length);
    for (let i = 0; i < bytes.length; i++) ids[i] = bytes[i] + BYTE_ID_OFFSET;
    return ids;
  },
  decode(ids) {
    const bytes = new Uint8Array(ids.length);
    ids.forEach((id, i) => {
      const b = id - BYTE_ID_OFFSET;
      if (!Number.isInteger(b) || b < 0 || b > 255)
        throw new TokenizerError(`id ${id} at position ${i} is not a byte id (expected ${BYTE_ID_OFFSET}–${255 + BYTE_ID_OFFSET})`);
      bytes[i] = b;
    });
    return utf8Strict.decode(bytes);
  },
};

/** One id per Unicode code point (id = code point): character-level servers such as the test stand-in. */
export const codepointTokenizer: Tokenizer = {
  name: 'codepoints',
  encode(text) {
    const ids: number[] = [];
    for (const ch of text) ids.push(ch.codePointAt(0)!);
    return ids;
  },
  decode(ids) {
    return ids
      .map((id, i) => {
        if (!Number.isInteger(id) || id < 0 || id > 0x10ffff) throw new TokenizerError(`id ${id} at position ${i} is not a Unicode code point`);
        return String.fromCodePoint(id);
      })
      .join('');
  },
};
