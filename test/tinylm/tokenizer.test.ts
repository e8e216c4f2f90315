import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatInformation } from '../../src/env/search/search-r1.ts';
import { TAGS, TOKEN_TYPE } from '../../src/tinylm/index.ts';
import { tinyPrompt, turnText } from '../../src/tinylm/world-text.ts';
import { fixture } from './fixtures.ts';

test('vocabulary layout: <unk> <s> </s>, 256 byte tokens, the tags, then pieces', () => {
  const { model } = fixture();
  const v = model.vocab;
  assert.deepEqual(v.pieces.slice(0, 3), ['<unk>', '<s>', '</s>']);
  assert.equal(v.pieces[3], '<0x00>');
  assert.equal(v.pieces[258], '<0xFF>');
  assert.ok(v.types.slice(3, 259).every((t) => t === TOKEN_TYPE.byte));
  assert.equal(new Set(v.pieces).size, v.pieces.length, 'pieces are unique');
});

test('tags are single tokens; text round-trips, including characters outside the vocabulary', () => {
  const { env, tokenizer } = fixture();
  for (const t of TAGS) assert.deepEqual(tokenizer.encode(t), [tokenizer.id(t)]);
  const q = env.train[3]!;
  const texts = [
    tinyPrompt(q),
    turnText({ type: 'search', input: 'Zoë Ωmega' }),
    formatInformation(env.world.passages.slice(5, 8)),
    'a  b\n\n c<answer>x</answer>',
    '',
  ];
  for (const s of texts) assert.equal(tokenizer.decode(tokenizer.encode(s)), s);
  const ids = tokenizer.encode('<search>Ω</search>');
  assert.equal(ids.length, 4, 'Ω (2 UTF-8 bytes) falls back to byte tokens');
  // Frequent words are single pieces: the vocabulary compresses the world's text.
  const info = formatInformation(env.world.passages.slice(0, 3));
  assert.ok(tokenizer.encode(info).length < info.length / 3);
});
