import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DatasetError, SearchEnv, corpusTool, exampleToPrompt, loadDataset, loadJsonlFile, parseDatasetJsonl, pooledPassages } from '../../src/env/index.ts';

test('the four bundled datasets load with their documented row counts and shapes', () => {
  const counts = { hotpotqa: 400, '2wikimultihopqa': 164, musique: 100, bamboogle: 125 } as const;
  for (const [name, n] of Object.entries(counts)) {
    const { examples, errors } = loadDataset(name as keyof typeof counts);
    assert.equal(examples.length, n, name);
    assert.equal(errors.length, 0);
    for (const e of examples) {
      assert.ok(e.question.length > 0 && e.answers[0]!.length > 0);
      if (name !== 'bamboogle') {
        const titles = new Set(e.paragraphs.map((p) => p.title));
        for (const s of e.supporting) assert.ok(titles.has(s), `${name} ${e.id}: supporting ${s}`);
        assert.ok(e.supporting.length >= 2);
      }
    }
  }
  const hp = loadDataset('hotpotqa', { limit: 1 }).examples[0]!;
  assert.equal(hp.paragraphs.length, 10);
  assert.ok(!/^\s/.test(hp.paragraphs[0]!.text) && !hp.paragraphs[0]!.text.includes('  '), 'sentences joined with single spaces');
  const mu = loadDataset('musique', { limit: 1 }).examples[0]!;
  assert.equal(mu.paragraphs.length, 20);
});

test('a malformed line stops loading with file:line, unless bad lines are skipped', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'trace-ds-'));
  const file = path.join(dir, 'mine.jsonl');
  writeFileSync(file, ['{"question":"Q1?","answer":"a"}', '{"question": ', '{"question":"Q3?"}', '', '{"id":"x","question":"Q5?","answer":"b"}'].join('\n'));
  assert.throws(
    () => loadJsonlFile(file),
    (e: unknown) => e instanceof DatasetError && e.line === 2 && e.message.startsWith(`${file}:2:`),
  );
  const { examples, errors } = loadJsonlFile(file, { skipBadLines: true });
  assert.deepEqual(
    examples.map((e) => e.question),
    ['Q1?', 'Q5?'],
  );
  assert.deepEqual(
    errors.map((e) => e.line),
    [2, 3],
  );
  assert.match(errors[1]!.message, /answer/);
  assert.equal(examples[1]!.id, 'x');
});

test('user JSONL in the HotpotQA and MuSiQue shapes is detected and converted', () => {
  const hot = JSON.stringify({
    _id: 'h1',
    question: 'Q?',
    answer: 'A',
    context: [
      ['T1', ['One.', ' Two.']],
      ['T2', ['x']],
    ],
    supporting_facts: [['T1', 0]],
  });
  const mus = JSON.stringify({
    id: '2hop__1',
    question: 'Q?',
    answer: 'A',
    answer_aliases: ['Alias'],
    paragraphs: [{ idx: 0, title: 'P', paragraph_text: 't', is_supporting: true }],
  });
  const { examples } = parseDatasetJsonl(`${hot}\n${mus}\n`, 'inline.jsonl');
  assert.deepEqual(examples[0]!.paragraphs[0], { id: 'h1#0', title: 'T1', text: 'One. Two.' });
  assert.deepEqual(examples[0]!.supporting, ['T1']);
  assert.deepEqual(examples[1]!.answers, ['A', 'Alias']);
  assert.equal(examples[1]!.type, '2hop');
});

test('per-question and pooled corpora: the question finds its own supporting paragraphs', async () => {
  const examples = loadDataset('hotpotqa', { limit: 30 }).examples;
  const pooled = pooledPassages(examples);
  assert.ok(pooled.length > 250 && pooled.length <= 300);
  for (const mode of ['per-question', 'pooled'] as const) {
    const env = new SearchEnv({ tool: corpusTool(mode, examples), topK: 5 });
    let found = 0;
    for (const e of examples) {
      const p = exampleToPrompt(e);
      const o = await env.step(env.reset(p), { type: 'search', input: e.question });
      if (e.supporting.some((t) => o.observation.includes(`(Title: "${t}")`))) found++;
    }
    assert.ok(found >= 24, `${mode}: ${found}/30 questions retrieve a supporting paragraph in the top 5`);
  }
});
