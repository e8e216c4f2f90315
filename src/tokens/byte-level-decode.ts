import type { Tokenizer as HfTokenizer } from '@huggingface/tokenizers';

/**
 * A byte-level BPE tokenizer's decode (GPT-2's scheme: Qwen, Llama 3, Mistral's newer files) written
 * for token mode's hot path: `@huggingface/tokenizers` decodes a turn's ~25 ids in about 15 µs and
 * 5 KB of garbage (an array of token strings, one joined string, an array of its characters, an array
 * of bytes, a linear search of the added tokens per id). This writes each id's bytes straight from its
 * vocabulary string into one reused buffer and decodes that once.
 *
 * Exact by construction, step for step what `Tokenizer.decode(ids, { skip_special_tokens: false,
 * clean_up_tokenization_spaces: false })` does with a `ByteLevel` decoder:
 * - each id's token is its vocabulary string (`id_to_token`);
 * - a token whose string is an added token's content is copied as it is and ends the run of byte
 *   tokens before it; each run's characters map to bytes by GPT-2's table and are decoded as one UTF-8
 *   sequence by a non-fatal TextDecoder that keeps a BOM, so a character whose bytes are split across
 *   ids decodes as it does there, and bytes that do not form UTF-8 become U+FFFD the same way;
 * - anything outside that (an id without a token, a character outside the byte table, no ids at all)
 *   answers undefined and the caller asks Hugging Face's decode, which then does what it always did.
 */
export type FastDecode = (ids: readonly number[]) => string | undefined;

/** The byte each character of a byte-level vocabulary stands for (GPT-2's `bytes_to_unicode`, reversed); −1 for none. */
function byteOfChar(): Int16Array {
  const table = new Int16Array(256 + 68).fill(-1);
  let n = 0;
  for (let b = 0; b < 256; b++) {
    // Printable Latin-1 bytes stand for themselves; the 68 others take the characters from U+0100 up, in byte order.
    const printable = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
    table[printable ? b : 256 + n++] = b;
  }
  return table;
}

/**
 * What this reads of the tokenizer's decoder: the package's typings do not resolve its decoder classes
 * under NodeNext (extensionless re-exports), so the fields are named here.
 */
interface DecoderView {
  config?: { type?: unknown };
  end_of_word_suffix?: unknown;
  added_tokens?: readonly { content: string }[];
}

/** The fast decode for `hf`, or undefined when its decoder is not a plain byte-level one (then use `hf.decode`). */
export function byteLevelDecode(hf: HfTokenizer): FastDecode | undefined {
  const decoder = (hf as unknown as { decoder: DecoderView | null }).decoder;
  // Only the ByteLevel decoder itself (the class the package makes for that type; not a Sequence around
  // it), and no end-of-word suffix, which decode would replace by spaces afterwards.
  if (!decoder || decoder.config?.type !== 'ByteLevel' || decoder.end_of_word_suffix || !Array.isArray(decoder.added_tokens)) return undefined;
  const added = new Set(decoder.added_tokens.map((t) => t.content));
  const byteOf = byteOfChar();
  const utf8 = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });
  let buf = new Uint8Array(1024);
  return (ids) => {
    if (ids.length === 0) return undefined;
    let text = '';
    let n = 0;
    for (let i = 0; i < ids.length; i++) {
      const token = hf.id_to_token(ids[i]!);
      if (token === undefined) return undefined;
      if (added.has(token)) {
        if (n > 0) text += utf8.decode(buf.subarray(0, n));
        n = 0;
        text += token;
        continue;
      }
      if (n + token.length > buf.length) {
        const grown = new Uint8Array(Math.max(2 * buf.length, n + token.length));
        grown.set(buf.subarray(0, n));
        buf = grown;
      }
      for (let k = 0; k < token.length; k++) {
        const c = token.charCodeAt(k);
        const b = c < byteOf.length ? byteOf[c]! : -1;
        if (b < 0) return undefined;
        buf[n++] = b;
      }
    }
    if (n > 0) text += utf8.decode(buf.subarray(0, n));
    return text;
  };
}
