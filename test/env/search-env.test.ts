import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Bm25Index, SearchEnv, parseTurn, type Passage } from '../../src/env/index.ts';
import type { Prompt } from '../../src/tree/types.ts';

const passages: Passage[] = [
  { id: '1', title: 'Heat (1995 film)', text: 'Heat is a 1995 crime film directed by Michael Mann.' },
  { id: '2', title: 'Michael Mann', text: 'Michael Mann is an American director born in Chicago.' },
  { id: '3', title: 'Chicago', text: 'Chicago is a city in Illinois.' },
  { id: '4', title: 'Heat wave', text: 'A heat wave is a period of hot weather.' },
];
const index = new Bm25Index(passages);
let calls = 0;
const env = new SearchEnv({ tool: { name: 'bm25', search: (q, { k }) => (calls++, index.search(q, k)) }, topK: 2, maxTurns: 4 });
const prompt: Prompt = { id: 'q1', question: 'Where was the director of Heat born?', answers: ['Chicago', 'Chicago, Illinois'] };

test('BM25 ranks the matching passage first and respects k', () => {
  const hits = index.search('Michael Mann director', 2);
  assert.equal(hits.length, 2);
  assert.equal(hits[0]!.title, 'Michael Mann');
  assert.ok(hits[0]!.score! >= hits[1]!.score!);
  assert.deepEqual(index.search('the of a', 3), [], 'stop words alone match nothing');
});

test('search then answer: observation format, reward from F1, score recorded', async () => {
  let s = env.reset(prompt);
  const a = await env.step(s, parseTurn('<search>Michael Mann</search>').action);
  assert.equal(a.done, false);
  assert.match(a.observation, /<information>Doc 1\(Title: "Michael Mann"\) Michael Mann is/);
  s = a.state;
  const b = await env.step(s, { type: 'answer', input: 'chicago' });
  assert.deepEqual([b.done, b.reward, b.score, b.reason], [true, 1, 1, 'answer']);
  const wrong = await env.step(s, { type: 'answer', input: 'Los Angeles' });
  assert.deepEqual([wrong.reward, wrong.score], [0, 0]);
  assert.equal(s.turn, 1, 'states are values: stepping twice from s does not change it');
});

test('invalid actions are observations that name the rule and count as turns; turn limit gives reward 0', async () => {
  let s = env.reset(prompt);
  const rules: string[] = [];
  for (const text of ['hmm', '<search>a</search><search>b</search>', '<search> </search>']) {
    const o = await env.step(s, parseTurn(text).action);
    assert.equal(o.invalid, true);
    rules.push(o.reason!);
    assert.match(o.observation, /Invalid action/);
    s = o.state;
  }
  assert.deepEqual(rules, ['no_action', 'multiple_actions', 'empty_query']);
  const unknown = await env.step(env.reset(prompt), { type: 'calculator', input: '1+1' });
  assert.equal(unknown.reason, 'unknown_tool');
  const before = calls;
  const last = await env.step(s, { type: 'search', input: 'Chicago' });
  assert.deepEqual([last.done, last.reward, last.reason], [true, 0, 'turn_limit']);
  assert.equal(calls, before, 'no tool call on the final turn');
  await assert.rejects(env.step(last.state, { type: 'answer', input: 'x' }));
});

// Restore equals replay without tool calls is part of the environment contract (test/env/contract.test.ts), on real HotpotQA data.
