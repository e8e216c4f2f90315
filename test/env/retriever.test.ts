import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Bm25Index, INFORMATION_CHARS, RetrieverClient, RetrieverError, SearchEnv, loadCorpus, serveRetriever } from '../../src/env/index.ts';

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

test('a hostile retriever: a huge passage is shown cut at INFORMATION_CHARS with a mark; a reply over maxReplyBytes is refused in one line (issue 69)', async () => {
  // A stand-in: trace-rl's own retriever serve bounds what it sends, so only a foreign server can do this.
  let mode: 'huge-passage' | 'streamed' | 'declared' = 'huge-passage';
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (mode === 'huge-passage') {
        res.setHeader('content-type', 'application/json');
        return void res.end(JSON.stringify({ result: [[{ document: { id: '0', contents: `"Big"\n${'w'.repeat(200_000)}` }, score: 1 }]] }));
      }
      if (mode === 'declared') res.setHeader('content-length', String(4 << 20));
      res.write('{"result": [[{"contents": "');
      // 2 MiB in chunks, no declared length (or a false one): the client counts what arrives.
      for (let i = 0; i < 32; i++) res.write('x'.repeat(1 << 16));
      res.end('"}]]}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const env = new SearchEnv({ tool: new RetrieverClient({ url }), topK: 3 });
    const prompt = { id: 'q', question: 'q?', answers: ['a'] };
    const o = await env.step(env.reset(prompt), { type: 'search', input: 'big' });
    assert.ok(o.observation.length < INFORMATION_CHARS + 200, `${o.observation.length} characters`);
    assert.match(o.observation, /^\n\n<information>Doc 1\(Title: "Big"\) www/);
    assert.match(o.observation, /… \[information cut: \d+ characters, at most 16384 are shown\]<\/information>\n\n$/);
    const small = new RetrieverClient({ url, maxReplyBytes: 1 << 20 });
    for (const m of ['streamed', 'declared'] as const) {
      mode = m;
      await assert.rejects(small.retrieve(['q'], 1), (e: Error) => {
        assert.ok(e instanceof RetrieverError, String(e));
        assert.match(
          e.message,
          /^retriever at http:\/\/127\.0\.0\.1:\d+\/retrieve sent a reply over 1048576 bytes; refused \(ask for fewer queries or a smaller topk\)$/,
        );
        return true;
      });
    }
  } finally {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
});
