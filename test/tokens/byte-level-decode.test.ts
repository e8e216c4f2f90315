import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Tokenizer as HfTokenizer } from '@huggingface/tokenizers';
import { byteLevelDecode } from '../../src/tokens/byte-level-decode.ts';
import { loadHfTokenizer, qwen3TokenizerDir } from '../../src/tokens/index.ts';
import { readTextFile } from '../../src/util/bounded-read.ts';
import { createRng } from '../../src/util/rng.ts';

// Qwen3's real tokenizer (151,643 byte-level tokens and 26 added ones), loaded once (~2 s).
const dir = qwen3TokenizerDir();
const json = JSON.parse(readTextFile(join(dir, 'tokenizer.json'))) as Record<string, unknown>;
const config = JSON.parse(readTextFile(join(dir, 'tokenizer_config.json'))) as Record<string, unknown>;
const hf = new HfTokenizer(json, config);
/** What the tokenizer itself answers: the oracle. */
const reference = (ids: number[]) => hf.decode(ids, { skip_special_tokens: false, clean_up_tokenization_spaces: false });
const fast = byteLevelDecode(hf)!;
const vocabSize = hf.get_vocab().size;
const addedIds = [...hf.get_added_tokens_decoder().keys()];

/** Texts whose characters take one to four UTF-8 bytes each, which Qwen's vocabulary splits across ids. */
const MULTILINGUAL = [
  '北京是中华人民共和国的首都。<think>\n答案是 1949 年。</think>',
  '東京タワーは1958年に完成しました。日本語のテキスト、カタカナ、ひらがな。',
  'Ünïcödé façade — naïve café; Ελληνικά; Русский текст; עברית; العربية; हिन्दी; ไทย',
  'emoji 👩‍👩‍👧‍👦 🏳️‍🌈 🇯🇵 ✍🏽 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𓀀 😀😃😄 and combining e\u0301 a\u0308 \u200b\u200d',
  '\uFEFFa BOM first, then tabs\tand\r\nnewlines\n\n\n   and spaces   ',
  '<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n4<|im_end|><|endoftext|>',
];

/** Every bundled dataset text (a few lines of each file), as the Qwen3 round-trip test reads them. */
function datasetTexts(): string[] {
  const texts: string[] = [];
  const collect = (v: unknown): void => {
    if (typeof v === 'string') texts.push(v);
    else if (Array.isArray(v)) v.forEach(collect);
    else if (v && typeof v === 'object') Object.values(v).forEach(collect);
  };
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (p.endsWith('.jsonl') || p.endsWith('.jsonl.gz'))
        for (const line of readTextFile(p).split('\n').slice(0, 10)) if (line) collect(JSON.parse(line));
    }
  };
  walk(new URL('../../data/', import.meta.url).pathname);
  return texts;
}

test('every id of the vocabulary alone decodes as the tokenizer decodes it (the byte table, partial UTF-8, added tokens)', () => {
  assert.ok(vocabSize > 151_000, `${vocabSize} tokens`);
  let fellBack = 0;
  for (let id = 0; id < vocabSize; id++) {
    const got = fast([id]);
    if (got === undefined) fellBack++;
    else assert.equal(got, reference([id]), `id ${id}`);
  }
  // Qwen's whole vocabulary is byte-level: nothing needs the slow path.
  assert.equal(fellBack, 0);
});

test('real id sequences, whole and cut at every kind of place, decode as the tokenizer decodes them', () => {
  const rng = createRng(68);
  const texts = [...MULTILINGUAL, ...datasetTexts()];
  assert.ok(texts.length > 200, `${texts.length} texts`);
  let cut = 0;
  for (const text of texts) {
    const ids = hf.encode(text, { add_special_tokens: false }).ids;
    if (ids.length === 0) continue;
    assert.equal(fast(ids), reference(ids));
    // Random windows: most start or end inside a character whose bytes span several ids.
    for (let k = 0; k < 8; k++) {
      const a = rng.int(ids.length);
      const b = a + 1 + rng.int(ids.length - a);
      const window = ids.slice(a, b);
      assert.equal(fast(window), reference(window), `${JSON.stringify(text.slice(0, 40))} ids ${a}..${b}`);
      cut++;
    }
  }
  assert.ok(cut > 1000, `${cut} windows`);
  // The multilingual texts do split characters across ids (else the windows above test little).
  const split = MULTILINGUAL.flatMap((t) => hf.encode(t, { add_special_tokens: false }).ids).filter((id) => reference([id]).includes('\uFFFD'));
  assert.ok(split.length > 10, `${split.length} ids that are part of a character`);
});

test('random ids from the whole vocabulary, added tokens mixed in, decode as the tokenizer decodes them (invalid UTF-8 included)', () => {
  const rng = createRng(6);
  for (let k = 0; k < 3000; k++) {
    const ids = Array.from({ length: 1 + rng.int(40) }, () => (rng.next() < 0.1 ? addedIds[rng.int(addedIds.length)]! : rng.int(vocabSize)));
    assert.equal(fast(ids), reference(ids), JSON.stringify(ids));
  }
  // Runs of single-byte ids (ids 0–255 of a byte-level vocabulary are byte tokens): lone continuation
  // bytes, truncated and overlong sequences, surrogates' encodings, a BOM's bytes between added tokens.
  for (let k = 0; k < 3000; k++) {
    const ids = Array.from({ length: 1 + rng.int(12) }, () => (rng.next() < 0.05 ? addedIds[0]! : rng.int(256)));
    assert.equal(fast(ids), reference(ids), JSON.stringify(ids));
  }
});

test('what the fast path does not take is the tokenizer’s own answer: no ids, ids outside the vocabulary', () => {
  assert.equal(fast([]), undefined);
  assert.equal(fast([vocabSize + 1000]), undefined);
  assert.equal(fast([9707, -1]), undefined);
  assert.equal(fast([9707, 1.5]), undefined);
  // Through loadHfTokenizer the same ids give exactly what Hugging Face's decode gives (or throws).
  const tok = loadHfTokenizer(dir).tokenizer;
  assert.throws(
    () => tok.decode([]),
    (e: Error) => e.message === captured(() => reference([])),
  );
  for (const ids of [[vocabSize + 1000], [9707, vocabSize + 5], [9707, 1879, 151644]]) assert.equal(tok.decode(ids), reference(ids));
});

test('a tokenizer whose decoder is not byte-level, or whose vocabulary has characters outside the byte table, is decoded by the tokenizer', () => {
  const model = { type: 'BPE', vocab: { a: 0, '▁b': 1, é: 2, Ā: 3, ĀĀ: 4 }, merges: [] };
  const rest = { normalizer: null, pre_tokenizer: null, post_processor: null, added_tokens: [] };
  const metaspace = new HfTokenizer({ model, decoder: { type: 'Metaspace', replacement: '▁', add_prefix_space: true }, ...rest }, {});
  assert.equal(byteLevelDecode(metaspace), undefined);
  const sequence = new HfTokenizer({ model, decoder: { type: 'Sequence', decoders: [{ type: 'ByteLevel' }] }, ...rest }, {});
  assert.equal(byteLevelDecode(sequence), undefined);
  // 'é' (U+00E9) is in GPT-2's table (byte 0xE9); '▁' (U+2581) is not: that sequence goes to the tokenizer.
  const byteLevel = new HfTokenizer({ model, decoder: { type: 'ByteLevel' }, ...rest }, {});
  const f = byteLevelDecode(byteLevel)!;
  assert.equal(f([1, 0]), undefined);
  // U+0100 is byte 0x00: 'ĀĀ' is two NUL bytes; 'é' alone is a lone 0xE9 (U+FFFD).
  assert.equal(f([4, 0, 2]), '\0\0a\uFFFD');
  assert.equal(f([4, 0, 2]), byteLevel.decode([4, 0, 2], { skip_special_tokens: false, clean_up_tokenization_spaces: false }));
});

/** The message `f` throws with. */
function captured(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('did not throw');
}
