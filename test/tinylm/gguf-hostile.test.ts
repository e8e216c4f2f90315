/**
 * Issue 31, GGUF input: a header claiming 2^63−1 tensors and keys made `serve --model` grow without
 * listening and `POST /reload` never answer; a truncated model printed llama.cpp's log lines before
 * our error; `/reload` of a copy of /etc/passwd answered with its first bytes; two responses shared an
 * id. Everything here runs the real `trace-rl serve` (under a memory and time watchdog where the old
 * code grew without bound).
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { checkGgufFile } from '../../src/tinylm/gguf-file.ts';
import { TYPE_LAYOUT } from '../../src/tinylm/gguf-header.ts';
import { loadLlama } from '../../src/tinylm/llama-engine.ts';
import { CONTROL_TOKEN, controlTokenFile, runCliBounded, startServe } from '../helpers/run-cli.ts';
import { fixture, writeTemp } from './fixtures.ts';

const good = writeTemp(fixture({}, 4).model, 'good.gguf');
const dir = dirname(good);
/** "GGUF", version 3, tensor count and metadata count 2^63 − 1: 24 bytes. */
const bomb = join(dir, 'bomb.gguf');
const header = Buffer.alloc(24);
header.write('GGUF', 0, 'latin1');
header.writeUInt32LE(3, 4);
header.writeBigUInt64LE(2n ** 63n - 1n, 8);
header.writeBigUInt64LE(2n ** 63n - 1n, 16);
writeFileSync(bomb, header);
/** A string array claiming 2^40 elements, behind one honest entry. */
const arrayBomb = join(dir, 'array-bomb.gguf');
{
  const key = Buffer.from('tokenizer.ggml.tokens');
  const b = Buffer.alloc(24 + 8 + key.length + 4 + 4 + 8);
  b.write('GGUF', 0, 'latin1');
  b.writeUInt32LE(3, 4);
  b.writeBigUInt64LE(0n, 8);
  b.writeBigUInt64LE(1n, 16);
  b.writeBigUInt64LE(BigInt(key.length), 24);
  key.copy(b, 32);
  b.writeUInt32LE(9, 32 + key.length); // array
  b.writeUInt32LE(8, 36 + key.length); // of strings
  b.writeBigUInt64LE(2n ** 40n, 40 + key.length);
  writeFileSync(arrayBomb, b);
}
/** The good model cut in the middle of its tensor data. */
const truncated = join(dir, 'truncated.gguf');
const bytes = readFileSync(good);
writeFileSync(truncated, bytes.subarray(0, Math.floor(bytes.length * 0.6)));
const passwd = join(dir, 'passwd.gguf');
copyFileSync('/etc/passwd', passwd);
const passwdWords = readFileSync(passwd, 'utf8')
  .split(/[\s:]+/)
  .filter((w) => w.length >= 4);

const WATCH = { maxRssMb: 1200, timeoutMs: 30_000 };

test('our header check accepts a real model and refuses bombs and truncation in milliseconds, quoting no byte', () => {
  checkGgufFile(good);
  for (const [file, why] of [
    [bomb, /claims 9223372036854775807 metadata entries and 9223372036854775807 tensors/],
    [arrayBomb, /array of 1099511627776 elements cannot fit/],
    [truncated, /runs past the end of the file/],
    [passwd, /is not a GGUF file/],
  ] as const) {
    const t = performance.now();
    assert.throws(
      () => checkGgufFile(file),
      (e: unknown) => why.test((e as Error).message) && !passwdWords.some((w) => (e as Error).message.includes(w)),
      file,
    );
    assert.ok(performance.now() - t < 500, `${file}: ${performance.now() - t} ms`);
  }
});

test('the tensor layouts agree with the ggml that llama.cpp was built with', async () => {
  const bindings = ((await loadLlama()) as unknown as { _bindings: { getTypeSizeForGgmlType(t: number): number; getBlockSizeForGgmlType(t: number): number } })
    ._bindings;
  for (const [type, [block, size]] of Object.entries(TYPE_LAYOUT)) {
    assert.deepEqual(
      [BigInt(bindings.getBlockSizeForGgmlType(Number(type))), BigInt(bindings.getTypeSizeForGgmlType(Number(type)))],
      [block, size],
      `ggml type ${type}`,
    );
  }
});

test('trace-rl serve --model with a header bomb or a truncated model: one line of ours, exit 2, bounded memory', async () => {
  for (const file of [bomb, arrayBomb, truncated]) {
    const r = await runCliBounded(['serve', '--model', file, '--port', '0'], WATCH);
    assert.equal(r.killed, undefined, `${file}: killed, ${r.killed}`);
    assert.equal(r.code, 2, `${file}: ${r.stderr}`);
    assert.equal(r.stderr.trim().split('\n').length, 1, `${file}: one line, no llama.cpp log:\n${r.stderr}`);
    assert.match(r.stderr, /^trace-rl: --model .*: not a usable GGUF model: /);
  }
});

let server: ChildProcess;
let root: string;

before(async () => {
  const started = await startServe(good, ['--allow-reload', '--control-token-file', controlTokenFile(), '--parallel', '2']);
  server = started.child;
  root = started.baseURL.replace(/\/v1$/, '');
});
after(() => {
  server.kill('SIGTERM');
});

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

/**
 * POSTs /reload while watching the server: past 1,200 MB resident or 20 s it is killed and the
 * reload fails (code that trusts the header's counts grew the server to 6.3 GB).
 */
async function reload(model: string): Promise<{ status: number; text: string; ms: number }> {
  const t = performance.now();
  const abort = new AbortController();
  const watch = setInterval(() => {
    const rss = rssMb(server.pid!);
    if (rss > 1200 || performance.now() - t > 20_000) {
      server.kill('SIGKILL');
      abort.abort(new Error(`the server was killed during /reload ${model}: ${Math.round(rss)} MB after ${Math.round(performance.now() - t)} ms`));
    }
  }, 50);
  try {
    const r = await fetch(`${root}/reload`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${CONTROL_TOKEN}` },
      body: JSON.stringify({ model }),
      signal: abort.signal,
    });
    return { status: r.status, text: await r.text(), ms: performance.now() - t };
  } finally {
    clearInterval(watch);
  }
}

test('POST /reload is a control route: text/plain, a foreign Origin or Host, no or a wrong token are refused before any file is read', async () => {
  const attacks: Array<[Record<string, string>, number, string]> = [
    [{ 'content-type': 'text/plain' }, 415, 'unsupported_media_type'],
    [{ 'content-type': 'text/plain', authorization: `Bearer ${CONTROL_TOKEN}` }, 415, 'unsupported_media_type'],
    [{ 'content-type': 'text/plain', origin: 'http://evil.example' }, 403, 'foreign_origin'],
    [{ 'content-type': 'application/json' }, 401, 'invalid_token'],
    [{ 'content-type': 'application/json', authorization: 'Bearer wrong' }, 401, 'invalid_token'],
  ];
  for (const [headers, status, code] of attacks) {
    const r = await fetch(`${root}/reload`, { method: 'POST', headers, body: JSON.stringify({ model: '/etc/passwd' }) });
    assert.equal(r.status, status, JSON.stringify(headers));
    const body = (await r.json()) as { error: { code: string; message: string } };
    assert.equal(body.error.code, code);
    assert.doesNotMatch(body.error.message, /passwd|root:/);
  }
});

test('POST /reload: a bomb, a truncated model and a copy of /etc/passwd are quick 400s that quote no byte; a good model still reloads', async () => {
  const before = rssMb(server.pid!);
  for (const file of [bomb, arrayBomb, truncated, passwd]) {
    const r = await reload(file);
    assert.equal(r.status, 400, `${file}: ${r.text}`);
    assert.ok(r.ms < 2000, `${file}: answered in ${r.ms} ms`);
    const message = JSON.parse(r.text).error.message as string;
    assert.equal(JSON.parse(r.text).error.code, 'invalid_model');
    assert.ok(!passwdWords.some((w) => message.includes(w)), `${file}: the answer quotes the file: ${message}`);
  }
  assert.ok(rssMb(server.pid!) - before < 200, `the server grew from ${before} to ${rssMb(server.pid!)} MB`);
  const health = await fetch(`${root}/health`);
  assert.equal(health.status, 200);
  const ok = await reload(good);
  assert.equal(ok.status, 200, ok.text);
});

test('response ids are unique for the server’s life: seeded, concurrent, chat and completions, across a reload', async () => {
  const post = async (route: string, body: object) => {
    const r = await fetch(`${root}/v1/${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    assert.equal(r.status, 200);
    return ((await r.json()) as { id: string }).id;
  };
  const completion = { prompt: 'the', max_tokens: 2, seed: 7, temperature: 0 };
  const chat = { messages: [{ role: 'user', content: 'the' }], max_tokens: 2, seed: 7, temperature: 0 };
  const ids: string[] = [];
  ids.push(...(await Promise.all([0, 1, 2, 3].map(() => post('completions', completion)))));
  ids.push(await post('completions', completion), await post('completions', { ...completion, seed: undefined }));
  ids.push(...(await Promise.all([0, 1].map(() => post('chat/completions', chat)))));
  assert.equal((await reload(good)).status, 200);
  ids.push(await post('completions', completion), await post('chat/completions', chat));
  assert.equal(new Set(ids).size, ids.length, `duplicate ids: ${ids.join(' ')}`);
});
