/**
 * The retriever under hostile requests, over real HTTP from the real `trace-rl retriever serve`
 * (docs/reliability.md): oversized bodies, queries and batches are refused with 413 JSON naming the
 * limit, within a time limit; /health answers within a second while a large allowed batch runs;
 * SIGINT stops the server promptly in the middle of that batch.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { postJson, postOversized, probeHealth, startServerCli, type ServerCli } from '../helpers/server-cli.ts';

let server: ServerCli;
const words = (n: number, salt = 0) =>
  Array.from({ length: n }, (_, i) => ['film', 'director', 'river', 'born', 'city', 'album', 'band', 'war'][(i + salt) % 8] + String((i * 7 + salt) % 97)).join(
    ' ',
  );

before(async () => {
  server = await startServerCli(['retriever', 'serve', '--dataset', 'hotpotqa', '--port', '0']);
});
after(async () => {
  await server.stop('SIGTERM');
});

test('a 10,000-word query is a 413 naming --max-query-terms, at once, and /health stays up', async () => {
  const t = performance.now();
  const req = postJson(`${server.url}/retrieve`, { queries: [words(10_000)] });
  const health = await probeHealth(server.url, req);
  const { status, json } = await req;
  assert.equal(status, 413);
  assert.equal(json.error.code, 'too_many_terms');
  assert.match(json.error.message, /queries\[0\] with 10,000 terms exceeds the limit of 64 terms per query \(--max-query-terms\)/);
  assert.ok(performance.now() - t < 3000);
  assert.ok(health.slowest < 1000);
});

test('20,000 queries in one request are a 413 naming --max-queries', async () => {
  const t = performance.now();
  const { status, json } = await postJson(`${server.url}/retrieve`, { queries: Array.from({ length: 20_000 }, (_, i) => `film ${i}`) });
  assert.equal(status, 413);
  assert.equal(json.error.code, 'too_many_queries');
  assert.match(json.error.message, /20,000 queries exceeds the limit of 1,024 queries per request \(--max-queries\)/);
  assert.ok(performance.now() - t < 3000);
});

test('a 50,000-word (300 KB+) query fits the body limit but not the term limit; a 2 MB body is refused before parsing', async () => {
  const big = await postJson(`${server.url}/retrieve`, { queries: [words(50_000)] });
  assert.equal(big.status, 413);
  assert.equal(big.json.error.code, 'too_many_terms');
  const t = performance.now();
  const huge = await postOversized(`${server.url}/retrieve`, JSON.stringify({ queries: ['x'.repeat(2_000_000)] }));
  if ('status' in huge) {
    assert.equal(huge.status, 413);
    assert.equal(huge.json.error.code, 'body_too_large');
    assert.match(huge.json.error.message, /exceeds the limit of 1,048,576 bytes \(--max-body-bytes\)/);
  }
  assert.ok(performance.now() - t < 3000);
});

test('unknown routes, bad JSON and bad fields are JSON errors', async () => {
  const nf = await fetch(`${server.url}/nope`);
  assert.equal(nf.status, 404);
  assert.equal(((await nf.json()) as { error: { code: string } }).error.code, 'not_found');
  const bad = await postJson(`${server.url}/retrieve`, '{"queries": [');
  assert.equal(bad.status, 400);
  assert.equal(bad.json.error.code, 'invalid_json');
  const field = await postJson(`${server.url}/retrieve`, { queries: 'x' });
  assert.equal(field.status, 400);
  assert.match(field.json.error.message, /^queries:/);
});

test('a large allowed batch (1,024 queries × 64 terms) answers in full while /health answers within a second', async () => {
  const queries = Array.from({ length: 1024 }, (_, i) => words(64, i));
  const req = postJson(`${server.url}/retrieve`, { queries, topk: 3 });
  const health = await probeHealth(server.url, req);
  const { status, json } = await req;
  assert.equal(status, 200);
  assert.equal(json.result.length, 1024);
  assert.ok(health.probes >= 1);
  assert.ok(health.slowest < 1000, `slowest /health ${health.slowest.toFixed(0)} ms`);
});

test('SIGINT stops a server in the middle of a large batch within a few seconds', async () => {
  const own = await startServerCli(['retriever', 'serve', '--dataset', 'hotpotqa', '--port', '0', '--max-queries', '100000', '--max-body-bytes', '100000000']);
  const queries = Array.from({ length: 5000 }, (_, i) => words(64, i));
  const req = postJson(`${own.url}/retrieve`, { queries }).catch((e: Error) => e);
  await new Promise((r) => setTimeout(r, 1000));
  const { code, ms } = await own.stop('SIGINT');
  assert.equal(code, 0);
  assert.ok(ms < 3000, `took ${ms.toFixed(0)} ms to stop`);
  const outcome = await req;
  assert.ok(outcome instanceof Error, `the abandoned request fails (connection closed), got ${JSON.stringify(outcome).slice(0, 200)}`);
});
