/**
 * `trace-rl serve` (llama.cpp behind the OpenAI API) under hostile requests, over real HTTP from the
 * real command with a GGUF the project writes: a 1 MB prompt and a 50 MB body are refused with 413
 * JSON naming the limit, quickly, while /health answers; a token id outside the vocabulary is a 400;
 * SIGTERM stops a server that is generating.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { fixture, writeTemp } from '../tinylm/fixtures.ts';
import { runCli } from '../helpers/run-cli.ts';
import { postJson, postOversized, probeHealth, startServerCli, type ServerCli } from '../helpers/server-cli.ts';

const { model } = fixture({}, 4);
const file = writeTemp(model, 'tiny.gguf');
let server: ServerCli;

before(async () => {
  server = await startServerCli(['serve', '--model', file, '--port', '0']);
});
after(async () => {
  await server.stop('SIGTERM');
});

test('a 1 MB prompt is a 413 naming --max-prompt-chars, within seconds, and /health answers meanwhile', async () => {
  const t = performance.now();
  const req = postJson(`${server.url}/v1/completions`, { prompt: 'who is the mother of alice '.repeat(38_000), max_tokens: 4 });
  const health = await probeHealth(server.url, req);
  const { status, json } = await req;
  assert.equal(status, 413);
  assert.equal(json.error.code, 'prompt_too_long');
  assert.match(json.error.message, /a prompt of 1,026,000 characters exceeds the limit of 65,536 characters \(--max-prompt-chars\)/);
  assert.ok(performance.now() - t < 5000);
  assert.ok(health.slowest < 1000);
  const chat = await postJson(`${server.url}/v1/chat/completions`, { messages: [{ role: 'user', content: 'x'.repeat(70_000) }] });
  assert.equal(chat.status, 413);
  assert.equal(chat.json.error.code, 'prompt_too_long');
});

test('a 50 MB body is refused before it is parsed (413 body_too_large or the upload cut off)', async () => {
  const t = performance.now();
  const r = await postOversized(`${server.url}/v1/completions`, JSON.stringify({ prompt: 'x'.repeat(50_000_000) }));
  if ('status' in r) {
    assert.equal(r.status, 413);
    assert.equal(r.json.error.code, 'body_too_large');
    assert.match(r.json.error.message, /1,048,576 bytes \(--max-body-bytes\)/);
  }
  assert.ok(performance.now() - t < 10_000);
  assert.equal((await fetch(`${server.url}/health`)).status, 200, 'still up');
});

test('a prompt longer than the context in tokens is a 413; a token id outside the vocabulary is a 400', async () => {
  const long = await postJson(`${server.url}/v1/completions`, { prompt: Array.from({ length: 600 }, () => 5) });
  assert.equal(long.status, 413);
  assert.equal(long.json.error.code, 'prompt_too_many_tokens');
  assert.match(long.json.error.message, /600 tokens exceeds the limit of 512 tokens/);
  const oov = await postJson(`${server.url}/v1/completions`, { prompt: [1, 5, 999_999], max_tokens: 2 });
  assert.equal(oov.status, 400);
  assert.equal(oov.json.error.code, 'token_out_of_vocabulary');
  assert.match(oov.json.error.message, /prompt\[2\]: token id 999999 is outside the vocabulary/);
});

test('404 and bad JSON are JSON errors', async () => {
  const nf = await fetch(`${server.url}/v1/embeddings`, { method: 'POST', body: '{}' });
  assert.equal(nf.status, 404);
  assert.equal(((await nf.json()) as { error: { type: string } }).error.type, 'not_found_error');
  const bad = await postJson(`${server.url}/v1/completions`, '{"prompt": ');
  assert.equal(bad.status, 400);
  assert.equal(bad.json.error.code, 'invalid_json');
});

test('limits are flags: --max-prompt-chars 10 refuses an 11-character prompt', async () => {
  const own = await startServerCli(['serve', '--model', file, '--port', '0', '--max-prompt-chars', '10']);
  try {
    const r = await postJson(`${own.url}/v1/completions`, { prompt: 'x'.repeat(11), max_tokens: 1 });
    assert.equal(r.status, 413);
    assert.match(r.json.error.message, /limit of 10 characters/);
  } finally {
    await own.stop();
  }
});

test('SIGTERM stops a server while it generates, within a few seconds', async () => {
  const own = await startServerCli(['serve', '--model', file, '--port', '0', '--parallel', '1']);
  const req = postJson(`${own.url}/v1/completions`, { prompt: [1], max_tokens: 500, temperature: 1 }).catch((e: Error) => e);
  await new Promise((r) => setTimeout(r, 300));
  const { code, ms } = await own.stop('SIGTERM');
  assert.equal(code, 0);
  assert.ok(ms < 3000, `took ${ms.toFixed(0)} ms`);
  await req;
});

test('a port in use, a bad --host, and a missing, folder or non-GGUF --model are one line each, exit 2', async () => {
  const port = new URL(server.url).port;
  const cases: Array<[string[], RegExp]> = [
    [
      ['serve', '--model', file, '--port', port],
      new RegExp(`^trace-rl: --port ${port}: already in use on 127\\.0\\.0\\.1; stop the other server or choose another --port`),
    ],
    [['serve', '--model', file, '--port', '0', '--host', '203.0.113.7'], /^trace-rl: --host 203\.0\.113\.7: not an address of this machine/],
    [['serve', '--model', file, '--port', '0', '--host', 'no-such-host.invalid'], /^trace-rl: --host no-such-host\.invalid: unknown host name/],
    [['serve', '--model', '/nonexistent/m.gguf'], /^trace-rl: --model \/nonexistent\/m\.gguf: no such file; give a \.gguf model file/],
    [['serve', '--model', '/tmp'], /^trace-rl: --model \/tmp: is a folder; give a \.gguf model file/],
    [['serve', '--model', 'package.json'], /^trace-rl: --model package\.json: is not a GGUF file/],
    [['serve', '--model', file, '--port', '0x50'], /^trace-rl: --port "0x50": expected a whole number in decimal digits in \[0, 65535\]/],
  ];
  for (const [args, line] of cases) {
    const r = await runCli(args);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, line);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  }
});
