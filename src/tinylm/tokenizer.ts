import { BOS_ID, EOS_ID, SPACE, TOKEN_TYPE, UNK_ID, type Vocabulary } from './vocabulary.ts';

interface Symbol {
  text: string;
  prev: number;
  next: number;
  /** Characters merged into this symbol; 0 once merged into its left neighbour. */
  alive: boolean;
}

interface Bigram {
  left: number;
  right: number;
  score: number;
  text: string;
}

/** Max-heap order of llama.cpp's SPM work queue: higher score first, then the leftmost pair. */
const before = (a: Bigram, b: Bigram) => a.score > b.score || (a.score === b.score && a.left < b.left);

/**
 * The SPM tokenizer as llama.cpp runs it for `tokenizer.ggml.model = "llama"` with
 * `add_space_prefix = false`: user-defined tokens (the Search-R1 tags) are split out first; each
 * remaining fragment has its spaces written `▁`, starts as one symbol per character, and the adjacent
 * pair whose concatenation is a vocabulary piece with the highest score (leftmost on ties) is merged
 * until none is left; a symbol that is not a piece falls back to its UTF-8 byte tokens. Encoding in
 * project code and passing ids to llama.cpp keeps the token sequence exact.
 */
export class Tokenizer {
  readonly pieces: readonly string[];
  private readonly ids = new Map<string, number>();
  private readonly scores: readonly number[];
  private readonly types: readonly number[];
  private readonly special: string[];
  private readonly byteIds: number[] = [];

  constructor(vocab: Vocabulary) {
    this.pieces = vocab.pieces;
    this.scores = vocab.scores;
    this.types = vocab.types;
    vocab.pieces.forEach((p, i) => {
      if (!this.ids.has(p)) this.ids.set(p, i);
      if (vocab.types[i] === TOKEN_TYPE.byte) this.byteIds[parseInt(p.slice(3, 5), 16)] = i;
    });
    this.special = vocab.pieces.filter((_, i) => vocab.types[i] === TOKEN_TYPE.userDefined).sort((a, b) => b.length - a.length);
  }

  get size(): number {
    return this.pieces.length;
  }

  get bos(): number {
    return BOS_ID;
  }

  get eos(): number {
    return EOS_ID;
  }

  /** The id of a piece (a tag, `▁word`, `<0x0A>`…), or undefined. */
  id(piece: string): number | undefined {
    return this.ids.get(piece);
  }

  encode(text: string): number[] {
    const out: number[] = [];
    let start = 0;
    for (let i = 0; i < text.length;) {
      const tag = text[i] === '<' ? this.special.find((t) => text.startsWith(t, i)) : undefined;
      if (tag === undefined) {
        i++;
        continue;
      }
      if (i > start) this.encodeFragment(text.slice(start, i), out);
      out.push(this.ids.get(tag)!);
      i += tag.length;
      start = i;
    }
    if (start < text.length) this.encodeFragment(text.slice(start), out);
    return out;
  }

  private encodeFragment(raw: string, out: number[]): void {
    const chars = [...raw.replaceAll(' ', SPACE)];
    const sym: Symbol[] = chars.map((c, i) => ({ text: c, prev: i - 1, next: i + 1 < chars.length ? i + 1 : -1, alive: true }));
    const heap: Bigram[] = [];
    const revMerge = new Map<string, [string, string]>();
    const push = (left: number, right: number) => {
      if (left < 0 || right < 0) return;
      const text = sym[left]!.text + sym[right]!.text;
      const id = this.ids.get(text);
      if (id === undefined) return;
      heapPush(heap, { left, right, score: this.scores[id]!, text });
      revMerge.set(text, [sym[left]!.text, sym[right]!.text]);
    };
    for (let i = 1; i < sym.length; i++) push(i - 1, i);
    for (let b = heapPop(heap); b; b = heapPop(heap)) {
      const l = sym[b.left]!;
      const r = sym[b.right]!;
      // Stale entry: one side already merged, or the pair no longer spells this text.
      if (!l.alive || !r.alive || l.next !== b.right || l.text + r.text !== b.text) continue;
      l.text = b.text;
      r.alive = false;
      l.next = r.next;
      if (r.next >= 0) sym[r.next]!.prev = b.left;
      push(l.prev, b.left);
      push(b.left, l.next);
    }
    for (let i = sym.length ? 0 : -1; i !== -1; i = sym[i]!.next) this.resegment(sym[i]!.text, revMerge, out);
  }

  private resegment(text: string, revMerge: Map<string, [string, string]>, out: number[]): void {
    const id = this.ids.get(text);
    if (id !== undefined) return void out.push(id);
    const parts = revMerge.get(text);
    if (parts) {
      this.resegment(parts[0], revMerge, out);
      this.resegment(parts[1], revMerge, out);
      return;
    }
    for (const byte of new TextEncoder().encode(text)) out.push(this.byteIds[byte] ?? UNK_ID);
  }

  /** Text of ids: `▁` → space, byte tokens → their bytes (UTF-8 decoded together), control tokens → nothing. */
  decode(ids: readonly number[]): string {
    const bytes: number[] = [];
    const enc = new TextEncoder();
    for (const id of ids) {
      const type = this.types[id];
      const piece = this.pieces[id];
      if (piece === undefined || type === TOKEN_TYPE.control || type === TOKEN_TYPE.unknown) continue;
      if (type === TOKEN_TYPE.byte) bytes.push(parseInt(piece.slice(3, 5), 16));
      else bytes.push(...enc.encode(piece.replaceAll(SPACE, ' ')));
    }
    return new TextDecoder().decode(new Uint8Array(bytes));
  }
}

function heapPush(h: Bigram[], b: Bigram): void {
  h.push(b);
  for (let i = h.length - 1; i > 0;) {
    const p = (i - 1) >> 1;
    if (!before(h[i]!, h[p]!)) break;
    [h[i], h[p]] = [h[p]!, h[i]!];
    i = p;
  }
}

function heapPop(h: Bigram[]): Bigram | undefined {
  const top = h[0];
  const last = h.pop();
  if (h.length > 0 && last) {
    h[0] = last;
    for (let i = 0; ;) {
      const l = 2 * i + 1,
        r = l + 1;
      let m = i;
      if (l < h.length && before(h[l]!, h[m]!)) m = l;
      if (r < h.length && before(h[r]!, h[m]!)) m = r;
      if (m === i) break;
      [h[i], h[m]] = [h[m]!, h[i]!];
      i = m;
    }
  }
  return top;
}
