/**
 * A secured server: the API key comes from TRACE_RL_API_KEY (or OPENAI_API_KEY) or a key file, is
 * sent to every server the run talks to (completions and the tokenizer endpoint), and appears
 * nowhere the run writes: not on stdout or stderr, not in the SQLite files, the batches or the
 * evaluation folder.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../helpers/run-cli.ts';
import { RunStore } from '../../src/store/index.ts';
import { startFlakyServer } from './flaky-server.ts';

const KEY = 'sk-trace-test-7c1e9a5b0d3f48e2';
const root = mkdtempSync(join(tmpdir(), 'trace-api-key-'));
const ARGS = ['--steps', '1', '--pool', '4', '--budget', '8', '--set', 'env.questions=300', '--set', 'engine.retry.maxAttempts=1', '--format', 'jsonl'];
const NO_KEY = { TRACE_RL_API_KEY: '', OPENAI_API_KEY: '' };

/** Every file under `dir`, as bytes (SQLite database, its WAL, batches, metadata, pages). */
function filesUnder(dir: string): Array<{ file: string; bytes: Buffer }> {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((f) => join(dir, f))
    .filter((f) => statSync(f).isFile())
    .map((file) => ({ file, bytes: readFileSync(file) }));
}

function assertNowhere(dir: string, text: string) {
  const files = filesUnder(dir);
  assert.ok(
    files.some((f) => f.file.endsWith('run.sqlite') || f.file.endsWith('eval.json')),
    `the folder was written: ${files.map((f) => f.file).join(', ')}`,
  );
  for (const { file, bytes } of files) assert.equal(bytes.indexOf(KEY), -1, `${file} holds the API key`);
  assert.ok(!text.includes(KEY), 'the key is not printed');
}

test('rollout with TRACE_RL_API_KEY: every request (completions, /tokenize) carries the key; the run folder and the output never hold it', async () => {
  const server = await startFlakyServer({ apiKey: KEY });
  const out = join(root, 'env-key');
  try {
    const r = await runCli(['rollout', '--policy', 'openai', '--base-url', server.url, '--tokenizer', 'server', '--out', out, ...ARGS], '', {
      ...NO_KEY,
      TRACE_RL_API_KEY: KEY,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.ok(
      server.seen.some((s) => s.path === '/tokenize'),
      'the tokenizer endpoint was used',
    );
    assert.ok(server.seen.some((s) => s.path === '/v1/completions'));
    for (const s of server.seen) assert.equal(s.authorization, `Bearer ${KEY}`, `${s.path} was sent the key`);
    assertNowhere(out, r.stdout + r.stderr);
  } finally {
    await server.close();
  }
});

test('rollout with a key file (OPENAI_API_KEY unset): the key is used, only the file’s path is stored', async () => {
  const server = await startFlakyServer({ apiKey: KEY });
  const keyFile = join(root, 'key.txt');
  writeFileSync(keyFile, `${KEY}\n`);
  const out = join(root, 'file-key');
  try {
    const r = await runCli(
      ['rollout', '--policy', 'openai', '--base-url', server.url, '--tokenizer', 'codepoints', '--api-key-file', keyFile, '--out', out, ...ARGS],
      '',
      NO_KEY,
    );
    assert.equal(r.code, 0, r.stderr);
    assertNowhere(out, r.stdout + r.stderr);
    const store = RunStore.open(out, { readonly: true });
    try {
      assert.equal((store.config() as { policy: { apiKeyFile?: string } }).policy.apiKeyFile, keyFile);
    } finally {
      store.close();
    }
  } finally {
    await server.close();
  }
});

test('OPENAI_API_KEY is honoured too; a wrong key is one line saying the server refused it (exit 1), without the key', async () => {
  const server = await startFlakyServer({ apiKey: KEY });
  try {
    const ok = await runCli(
      ['rollout', '--policy', 'openai', '--base-url', server.url, '--tokenizer', 'codepoints', '--out', join(root, 'openai-key'), '--quiet', ...ARGS],
      '',
      { ...NO_KEY, OPENAI_API_KEY: KEY },
    );
    assert.equal(ok.code, 0, ok.stderr);
    const wrong = `${KEY}-wrong`;
    const r = await runCli(
      ['rollout', '--policy', 'openai', '--base-url', server.url, '--tokenizer', 'codepoints', '--out', join(root, 'wrong-key'), '--quiet', ...ARGS],
      '',
      { ...NO_KEY, TRACE_RL_API_KEY: wrong },
    );
    assert.equal(r.code, 1, r.stderr);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(
      r.stderr,
      /HTTP 401: 401 invalid API key \(got Bearer \[API key\]\) \(the server refused the API key: set TRACE_RL_API_KEY or OPENAI_API_KEY, or policy\.apiKeyFile\)/,
    );
    assert.ok(!(r.stdout + r.stderr).includes(KEY), 'not even the wrong key, echoed back by the server, is printed');
  } finally {
    await server.close();
  }
});

test('eval against a secured server: the key from the environment, nowhere in the evaluation folder', async () => {
  const server = await startFlakyServer({ apiKey: KEY });
  const out = join(root, 'eval');
  try {
    const r = await runCli(
      [
        'eval',
        '--env',
        'world',
        '--questions',
        '2',
        '--policy',
        'openai',
        '--base-url',
        server.url,
        '--set',
        'engine.retry.maxAttempts=1',
        '--out',
        out,
        '--quiet',
        '--json',
      ],
      '',
      { ...NO_KEY, TRACE_RL_API_KEY: KEY },
    );
    assert.equal(r.code, 0, r.stderr);
    for (const s of server.seen) assert.equal(s.authorization, `Bearer ${KEY}`);
    assertNowhere(out, r.stdout + r.stderr);
  } finally {
    await server.close();
  }
});

test('a key file that is empty or missing is one line naming policy.apiKeyFile', async () => {
  const empty = join(root, 'empty.txt');
  writeFileSync(empty, '\n');
  const r = await runCli(
    ['rollout', '--policy', 'openai', '--base-url', 'http://127.0.0.1:1/v1', '--api-key-file', empty, '--out', join(root, 'empty-key'), ...ARGS],
    '',
    NO_KEY,
  );
  assert.equal(r.code, 2, r.stderr);
  assert.equal(r.stderr.trim(), `trace-rl: policy.apiKeyFile ${empty}: the first line is empty; write the API key on it`);
  const missing = await runCli(
    [
      'rollout',
      '--policy',
      'openai',
      '--base-url',
      'http://127.0.0.1:1/v1',
      '--api-key-file',
      join(root, 'nope.txt'),
      '--out',
      join(root, 'missing-key'),
      ...ARGS,
    ],
    '',
    NO_KEY,
  );
  assert.equal(missing.code, 2, missing.stderr);
  assert.match(missing.stderr, /^trace-rl: policy\.apiKeyFile: .*nope\.txt: no such file; give a readable file\n$/);
});
