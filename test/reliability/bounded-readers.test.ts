/**
 * Issue 31, bounded input: every dataset reader refuses what is not a regular file and caps a line's
 * length and a file's size, with one line naming file:line and the fix. The CLI cases reproduce the
 * issue's commands under a watchdog (memory and time), so today's unbounded read fails fast instead
 * of filling the machine.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadJsonlFile } from '../../src/env/qa/datasets.ts';
import { loadMathDataset } from '../../src/env/math/datasets.ts';
import { loadCorpus } from '../../src/env/search/retriever-server.ts';
import { loadCategory, loadClassDocs } from '../../src/env/bfcl/data.ts';
import { loadLongContextData } from '../../src/env/bfcl/apis/shared.ts';
import { readConfigFile } from '../../src/cli/config-file.ts';
import { InputFileError, readLines, readTextFile } from '../../src/util/bounded-read.ts';
import { runCliBounded } from '../helpers/run-cli.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'trace-bounded-'));
const fifo = path.join(dir, 'pipe.jsonl');
execFileSync('mkfifo', [fifo]);
const folder = path.join(dir, 'folder.jsonl');
mkdirSync(folder);
/** One line of 5 MiB (over the 4 MiB line limit) after a good line. */
const longLine = path.join(dir, 'long.jsonl');
writeFileSync(longLine, `{"question":"Q?","answer":"a","title":"T","text":"x"}\n{"question":"${'x'.repeat(5 * 1024 * 1024)}","answer":"a"}\n`);
/** A sparse 300 MiB file (over the 256 MiB file limit) that takes no disk space. */
const huge = path.join(dir, 'huge.jsonl');
execFileSync('truncate', ['-s', String(300 * 1024 * 1024), huge]);

const oneLine = (e: unknown) => e instanceof Error && !e.message.includes('\n');

/** Every dataset reader, called on a path. */
const READERS: Array<[string, (file: string) => unknown]> = [
  ['qa dataset', (f) => loadJsonlFile(f)],
  ['math dataset', (f) => loadMathDataset(f)],
  ['retriever corpus', (f) => loadCorpus(f)],
  ['config file', (f) => readConfigFile(f)],
];

test('every dataset reader refuses a device, a FIFO and a folder at once, naming the path', () => {
  for (const [what, read] of READERS) {
    for (const [file, kind] of [
      ['/dev/zero', /a device/],
      [fifo, /a pipe/],
      [folder, /a folder/],
    ] as const) {
      const t = performance.now();
      assert.throws(
        () => read(file),
        (e: unknown) => oneLine(e) && (e as Error).message.includes(file) && kind.test((e as Error).message),
        `${what} on ${file}`,
      );
      assert.ok(performance.now() - t < 1000, `${what} on ${file} took ${performance.now() - t} ms`);
    }
  }
});

test('a line over the limit is refused by file:line; a file over the limit before it is read', () => {
  for (const [what, read] of READERS.slice(0, 3)) {
    assert.throws(
      () => read(longLine),
      (e: unknown) => e instanceof InputFileError && e.message.startsWith(`${longLine}:2: line longer than 4 MiB`),
      what,
    );
    // The corpus may be 1 GiB; this file then fails on its first (newline-less) 4 MiB instead.
    const whole = what === 'retriever corpus' ? new RegExp(`^${huge}:1: line longer than 4 MiB`) : /300 MiB, over the 256 MiB limit/;
    assert.throws(
      () => read(huge),
      (e: unknown) => e instanceof InputFileError && whole.test(e.message),
      what,
    );
  }
  assert.throws(() => readTextFile(huge), /over the 256 MiB limit/);
});

test('BFCL data files go through the same reader', () => {
  const bfcl = path.join(dir, 'bfcl');
  mkdirSync(path.join(bfcl, 'possible_answer'), { recursive: true });
  mkdirSync(path.join(bfcl, 'func_doc'), { recursive: true });
  execFileSync('mkfifo', [path.join(bfcl, 'possible_answer', 'BFCL_v4_multi_turn_base.json')]);
  execFileSync('mkfifo', [path.join(bfcl, 'func_doc', 'math_api.json')]);
  execFileSync('mkfifo', [path.join(bfcl, 'long_context.json')]);
  assert.throws(
    () => loadCategory(bfcl, 'base'),
    (e: unknown) => oneLine(e) && /possible_answer\/BFCL_v4_multi_turn_base\.json: is a pipe/.test((e as Error).message),
  );
  assert.throws(() => loadClassDocs(bfcl, 'MathAPI'), /math_api\.json: is a pipe/);
  assert.throws(() => loadLongContextData(bfcl), /long_context\.json: is a pipe/);
});

test('readLines: lines split across chunks, CRLF, a last line without newline, numbering', () => {
  const file = path.join(dir, 'lines.txt');
  const big = 'y'.repeat(200_000);
  writeFileSync(file, `a\r\n\n${big}\nlast`);
  assert.deepEqual(
    [...readLines(file)].map((l) => [l.line, l.text.length]),
    [
      [1, 1],
      [2, 0],
      [3, big.length],
      [4, 4],
    ],
  );
  writeFileSync(file, '');
  assert.deepEqual([...readLines(file)], []);
});

const CLI_LIMITS = { maxRssMb: 1500, timeoutMs: 60_000 };

test('trace-rl eval --env qa --datasets /dev/zero: one line naming the file, exit 2, bounded memory', async () => {
  const r = await runCliBounded(
    ['eval', '--env', 'qa', '--datasets', '/dev/zero', '--policy', 'embedded', '--split', 'all', '--out', path.join(dir, 'e1'), '--quiet'],
    CLI_LIMITS,
  );
  assert.equal(r.killed, undefined, `killed: ${r.killed}`);
  assert.equal(r.code, 2, r.stderr);
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  assert.match(r.stderr, /\/dev\/zero: is a device, not a regular file/);
});

test('trace-rl eval --env math --set env.math.testDataset=/dev/zero: one line naming the file, exit 2, bounded memory', async () => {
  const r = await runCliBounded(
    [
      'eval',
      '--env',
      'math',
      '--set',
      'env.math.testDataset=/dev/zero',
      '--policy',
      'openai',
      '--base-url',
      'http://127.0.0.1:9/v1',
      '--out',
      path.join(dir, 'e2'),
      '--quiet',
    ],
    CLI_LIMITS,
  );
  assert.equal(r.killed, undefined, `killed: ${r.killed}`);
  assert.equal(r.code, 2, r.stderr);
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  assert.match(r.stderr, /\/dev\/zero: is a device, not a regular file/);
});

test('a .gz input is read through gzip: the same lines as the plain file, a gzip bomb and a corrupt file refused by name', async () => {
  const { gzipSync } = await import('node:zlib');
  const rows = Array.from({ length: 500 }, (_, i) => JSON.stringify({ id: i, text: `row ${i} ${'y'.repeat(i % 97)}` })).join('\n') + '\n';
  const plain = path.join(dir, 'rows.jsonl');
  writeFileSync(plain, rows);
  writeFileSync(plain + '.gz', gzipSync(rows));
  assert.deepEqual([...readLines(plain + '.gz')], [...readLines(plain)]);
  assert.equal(readTextFile(plain + '.gz'), rows);
  // 64 MiB of zeros packs to about 64 KiB: refused at a 1 MiB limit before it is held.
  const bomb = path.join(dir, 'bomb.jsonl.gz');
  writeFileSync(bomb, gzipSync(Buffer.alloc(64 * 1024 * 1024)));
  assert.throws(
    () => [...readLines(bomb, { maxFileBytes: 1024 * 1024, maxLineBytes: 1024 })],
    (e) => e instanceof InputFileError && /expands to more than the 1 MiB limit/.test(e.message),
  );
  const corrupt = path.join(dir, 'corrupt.jsonl.gz');
  writeFileSync(corrupt, 'not gzip at all');
  assert.throws(
    () => [...readLines(corrupt)],
    (e) => e instanceof InputFileError && /corrupt\.jsonl\.gz: is not a valid gzip file/.test(e.message),
  );
});

test('trace-rl grade math < /dev/zero: stdin is refused past 256 MiB at once, exit 2, bounded memory', async () => {
  const r = await runCliBounded(['grade', 'math'], CLI_LIMITS, { file: '/dev/zero' });
  assert.equal(r.killed, undefined, `killed: ${r.killed}`);
  assert.equal(r.code, 2, r.stderr);
  assert.equal(r.stderr, 'trace-rl: stdin: more than 256 MiB; split the input into smaller batches\n');
});
