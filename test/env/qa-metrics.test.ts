import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isSuccess, normalizeAnswer, scoreAnswer, scoreOne } from '../../src/env/index.ts';

test('normalisation: lower case, ASCII punctuation, articles, whitespace', () => {
  assert.equal(normalizeAnswer('The  Beatles!'), 'beatles');
  assert.equal(normalizeAnswer('An apple, a day'), 'apple day');
  assert.equal(normalizeAnswer('Theatre'), 'theatre', 'article only as a whole word');
  assert.equal(normalizeAnswer('the-end'), 'theend', 'punctuation is removed before articles');
  assert.equal(normalizeAnswer('a\u00a0b\tthe\nc'), 'b c', 'Python split() whitespace incl. NBSP');
  assert.equal(normalizeAnswer('“quoted”'), '“quoted”', 'only ASCII punctuation is stripped');
  assert.equal(normalizeAnswer('éthe'), 'éthe', 'word boundaries are Unicode-aware as in Python 3');
  assert.equal(normalizeAnswer('\ufeffx'), '\ufeffx', 'U+FEFF is not whitespace for Python');
});

test('F1 on token multisets, precision and recall', () => {
  const s = scoreOne('the cat sat on the mat', 'a cat on a mat');
  assert.equal(s.em, 0);
  assert.equal(s.precision, 3 / 4);
  assert.equal(s.recall, 1);
  assert.ok(Math.abs(s.f1 - (2 * 0.75) / 1.75) < 1e-15);
  const dup = scoreOne('paris paris', 'paris');
  assert.deepEqual([dup.precision, dup.recall], [0.5, 1]);
  assert.deepEqual(scoreOne('Paris.', 'paris'), { em: 1, f1: 1, precision: 1, recall: 1 });
});

test('yes / no / noanswer: F1 is 0 unless equal', () => {
  assert.equal(scoreOne('yes', 'yes it is').f1, 0);
  assert.equal(scoreOne('no answer', 'noanswer').f1, 0);
  assert.equal(scoreOne('Yes.', 'yes').f1, 1);
  assert.equal(scoreOne('yes', 'no').em, 0);
  assert.equal(scoreOne('no way', 'no').f1, 0);
});

test('empty strings: EM 1 but F1 0 when both are empty; 0 when one is', () => {
  assert.deepEqual(scoreOne('', ''), { em: 1, f1: 0, precision: 0, recall: 0 });
  assert.deepEqual(scoreOne('the', 'a'), { em: 1, f1: 0, precision: 0, recall: 0 });
  assert.deepEqual(scoreOne('', 'paris'), { em: 0, f1: 0, precision: 0, recall: 0 });
  assert.equal(isSuccess(scoreOne('', '')), false);
  assert.equal(isSuccess(scoreOne('', ''), { rule: 'f1-or-em', threshold: 0.3 }), true);
});

test('several golds: each metric is its own maximum', () => {
  const s = scoreAnswer('new york city', ['new york', 'city of new york state']);
  assert.equal(s.em, 0);
  assert.equal(s.recall, 1);
  assert.equal(s.precision, 1);
  assert.ok(Math.abs(s.f1 - 0.8) < 1e-12);
  assert.equal(scoreAnswer('NYC', ['New York', 'nyc']).em, 1);
  assert.throws(() => scoreAnswer('x', []));
});

test('success rules and threshold', () => {
  const s = scoreOne('barack obama president', 'obama');
  assert.ok(Math.abs(s.f1 - 0.5) < 1e-12);
  assert.equal(isSuccess(s), true);
  assert.equal(isSuccess(s, { rule: 'f1', threshold: 0.6 }), false);
  assert.equal(isSuccess(s, { rule: 'em', threshold: 0 }), false);
  assert.equal(isSuccess(scoreOne('a b c d', 'a b c d e f g h i j'), { rule: 'f1', threshold: 0.3 }), true);
  assert.equal(isSuccess(scoreOne('x y z b', 'b q r s t u'), { rule: 'f1', threshold: 0.3 }), false);
});
