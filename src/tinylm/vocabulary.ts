/**
 * An SPM-style vocabulary in llama.cpp's layout (`tokenizer.ggml.model = "llama"`): ids 0–2 are
 * `<unk> <s> </s>`, then the 256 byte-fallback tokens `<0x00>`…`<0xFF>`, then the Search-R1 tags as
 * single user-defined tokens, then every character of the corpus, then merged pieces. Spaces are
 * written `▁` (U+2581) inside pieces. Merged pieces are learned BPE-style from a corpus (repeatedly
 * merge the most frequent adjacent pair inside a word); a piece's score is −(merge rank), so
 * llama.cpp's highest-score-first merging replays the learned merges in order.
 */

/** llama.cpp token types (llama_token_type). */
export const TOKEN_TYPE = { normal: 1, unknown: 2, control: 3, userDefined: 4, unused: 5, byte: 6 } as const;

export const UNK_ID = 0;
export const BOS_ID = 1;
export const EOS_ID = 2;
export const SPACE = '\u2581';

/** Search-R1 tags, each one token (user-defined: llama.cpp splits them out before SPM merging). */
export const TAGS = ['<search>', '</search>', '<answer>', '</answer>', '<information>', '</information>', '<think>', '</think>'] as const;

export interface Vocabulary {
  pieces: string[];
  scores: number[];
  types: number[];
}

export interface VocabularyOptions {
  /** Merged pieces to learn on top of the characters. Default 1200. */
  merges?: number;
}

const byteHex = (b: number) => `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`;

/** Words as BPE sees them: a run of letters, of digits or of other symbols, with its leading space. */
export function splitWords(text: string): string[] {
  return (text.match(/ ?[\p{L}\p{M}]+| ?\p{N}+| ?[^\s\p{L}\p{M}\p{N}]+|\s/gu) ?? []).map((w) => w.replaceAll(' ', SPACE));
}

/** Removes the tags (they are single tokens and never take part in merges). */
function stripTags(text: string): string[] {
  const re = new RegExp(TAGS.map((t) => t.replace(/[/]/g, '\\/')).join('|'), 'g');
  return text.split(re);
}

/**
 * Learns a vocabulary from corpus texts. Deterministic: ties between equally frequent pairs go to
 * the lexicographically smallest pair.
 */
export function buildVocabulary(corpus: readonly string[], options: VocabularyOptions = {}): Vocabulary {
  const nMerges = options.merges ?? 1200;
  const pieces: string[] = ['<unk>', '<s>', '</s>'];
  const types: number[] = [TOKEN_TYPE.unknown, TOKEN_TYPE.control, TOKEN_TYPE.control];
  const scores: number[] = [0, 0, 0];
  for (let b = 0; b < 256; b++) {
    pieces.push(byteHex(b));
    types.push(TOKEN_TYPE.byte);
    scores.push(0);
  }
  for (const t of TAGS) {
    pieces.push(t);
    types.push(TOKEN_TYPE.userDefined);
    scores.push(0);
  }
  const counts = new Map<string, number>();
  for (const text of corpus) for (const part of stripTags(text)) for (const w of splitWords(part)) counts.set(w, (counts.get(w) ?? 0) + 1);
  const words = [...counts.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([w, n]) => ({ symbols: [...w], n }));
  const chars = [...new Set(words.flatMap((w) => w.symbols))].sort();
  for (const c of chars) {
    pieces.push(c);
    types.push(TOKEN_TYPE.normal);
    scores.push(0);
  }
  const known = new Set(pieces);
  for (let m = 0; m < nMerges; m++) {
    const pairs = new Map<string, number>();
    for (const w of words)
      for (let i = 0; i + 1 < w.symbols.length; i++) {
        const key = w.symbols[i] + '\u0000' + w.symbols[i + 1];
        pairs.set(key, (pairs.get(key) ?? 0) + w.n);
      }
    let best: string | undefined;
    let bestN = 1; // a pair seen once is not worth a token
    for (const [key, n] of pairs) if (n > bestN || (n === bestN && best !== undefined && key < best)) [best, bestN] = [key, n];
    if (best === undefined) break;
    const [a, b] = best.split('\u0000') as [string, string];
    const merged = a + b;
    for (const w of words) {
      const s = w.symbols;
      for (let i = 0; i + 1 < s.length; i++) if (s[i] === a && s[i + 1] === b) s.splice(i, 2, merged);
    }
    if (known.has(merged)) continue;
    known.add(merged);
    pieces.push(merged);
    types.push(TOKEN_TYPE.normal);
    scores.push(-(m + 1));
  }
  return { pieces, scores, types };
}
