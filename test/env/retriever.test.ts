import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Bm25Index, RetrieverClient, RetrieverError, SearchEnv, loadCorpus, serveRetriever } from '../../src/env/index.ts';

function corpusFile(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'trace-corpus-'));
  const file = path.join(dir, 'corpus.jsonl');
  const lines = [
    { id: '0', contents: '"Michael Mann"\nMichael Mann is an American film director born in Chicago.' },
    { id: '1', contents: '"Heat (1995 film)"\nHeat is a 1995 crime film directed by Michael Mann.' },
    { title: 'Chicago', text: 'Chicago is the largest city in Illinois.' },
  ];
  writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  return file;
}

test('client and server speak the Search-R1 /retrieve API over real HTTP', async () => {
  const passages = loadCorpus(corpusFile());
  assert.deepEqual(passages[2], { id: '2', title: 'Chicago', text: 'Chicago is the largest city in Illinois.' });
  const index = new Bm25Index(passages);
  const server = await serveRetriever(index, { port: 0 });
  try {
    // raw request, exactly as Search-R1 sends it
    const raw = await fetch(`${server.url}/retrieve`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ queries: ['Heat film director', 'Illinois city'], topk: 2, return_scores: true }),
    });
    const body = (await raw.json()) as { result: Array<Array<{ document: { id: string; contents: string }; score: number }>> };
    assert.equal(body.result.length, 2);
    assert.equal(body.result[0]![0]!.document.contents, '"Heat (1995 film)"\nHeat is a 1995 crime film directed by Michael Mann.');
    assert.equal(typeof body.result[0]![0]!.score, 'number');
    assert.equal(body.result[1]![0]!.document.id, '2');
    const noScores = (await (await fetch(`${server.url}/retrieve`, { method: 'POST', body: JSON.stringify({ queries: ['Chicago'], topk: 1 }) })).json()) as {
      result: unknown[][];
    };
    assert.deepEqual(Object.keys(noScores.result[0]![0] as object).sort(), ['contents', 'id']);
    const bad = await fetch(`${server.url}/retrieve`, { method: 'POST', body: JSON.stringify({ queries: 'x' }) });
    assert.equal(bad.status, 400);

    const client = new RetrieverClient({ url: server.url });
    const lists = await client.retrieve(['Michael Mann', 'Chicago'], 1);
    assert.deepEqual(
      lists.map((l) => l.length),
      [1, 1],
    );
    const hits = await client.search('Heat film', { k: 2 });
    assert.equal(hits[0]!.title, 'Heat (1995 film)');
    assert.deepEqual(
      hits.map((h) => h.title),
      index.search('Heat film', 2).map((h) => h.title),
    );

    // the client as the search tool of an environment (async step)
    const env = new SearchEnv({ tool: client, topK: 2 });
    const prompt = { id: 'q', question: 'Where was the director of Heat born?', answers: ['Chicago'] };
    const o = await env.step(env.reset(prompt), { type: 'search', input: 'Michael Mann' });
    assert.match(o.observation, /Doc 1\(Title: "Michael Mann"\) Michael Mann is an American/);
  } finally {
    await server.close();
  }
  await assert.rejects(new RetrieverClient({ url: server.url, timeoutMs: 2000 }).retrieve(['x'], 1), RetrieverError);
});
