import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatInformation, fromContents, parseTurn, titlesIn, toContents } from '../../src/env/index.ts';

test('parses search and answer turns with reasoning', () => {
  const s = parseTurn('<think>I need the director.</think>\n<search> director of Heat </search>');
  assert.deepEqual(s, { ok: true, thought: 'I need the director.', action: { type: 'search', input: 'director of Heat' } });
  const a = parseTurn('It is Paris. <answer>Paris</answer>');
  assert.equal(a.ok, true);
  assert.deepEqual(a.action, { type: 'answer', input: 'Paris' });
  assert.equal(a.thought, 'It is Paris.');
});

test('lenient: tag case and spacing, missing closing tag at the end, trailing text', () => {
  assert.deepEqual(parseTurn('<Search >foo bar').action, { type: 'search', input: 'foo bar' });
  assert.deepEqual(parseTurn('<answer>\n  1987 \n</ answer>').action, { type: 'answer', input: '1987' });
  assert.deepEqual(parseTurn('<think>x</think><search>q</search><information>made up</information>').action, { type: 'search', input: 'q' });
});

test('strict: one action per turn, and the broken rule is named', () => {
  const cases: Array<[string, string]> = [
    ['I think so.', 'no_action'],
    ['<search>a</search><search>b</search>', 'multiple_actions'],
    ['<search>a</search> <answer>b</answer>', 'multiple_actions'],
    ['<search>   </search>', 'empty_query'],
    ['<answer></answer>', 'empty_answer'],
    ['<lookup>x</lookup>', 'unknown_tool'],
    ['<search>q <think>more</think>', 'unclosed_tag'],
  ];
  for (const [text, rule] of cases) {
    const p = parseTurn(text);
    assert.equal(p.ok, false, text);
    if (!p.ok) {
      assert.equal(p.rule, rule, text);
      assert.equal(p.action.type, 'invalid');
      assert.ok(p.action.input.startsWith(`${rule}: `));
    }
  }
});

test('Search-R1 corpus contents and information block round-trip', () => {
  assert.equal(toContents({ title: 'Heat (film)', text: 'Heat is a 1995 film.' }), '"Heat (film)"\nHeat is a 1995 film.');
  assert.deepEqual(fromContents('"Heat (film)"\nHeat is a 1995 film.\nSecond line.'), { title: 'Heat (film)', text: 'Heat is a 1995 film.\nSecond line.' });
  const info = formatInformation([
    { title: 'A', text: 'first' },
    { title: 'B "x"', text: 'second' },
  ]);
  assert.equal(info, '\n\n<information>Doc 1(Title: "A") first\nDoc 2(Title: "B "x"") second</information>\n\n');
  assert.deepEqual(titlesIn(info), ['A', 'B "x"']);
});
