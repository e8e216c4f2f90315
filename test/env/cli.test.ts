import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { RetrieverClient, scoreAnswer } from '../../src/env/index.ts';

const bin = path.resolve(import.meta.dirname, '../../bin/trace-rl.js');

/** Runs the real binary (async, so the tests below can overlap: each start loads the whole CLI). */
function run(args: string[], input: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
    child.stdin.end(input);
  });
}

describe('trace-rl score and retriever (real processes)', { concurrency: true }, () => {
  test('trace-rl score: JSON lines in, metrics out, max over several golds', async () => {
    const rows = [
      { prediction: 'The Eiffel Tower', gold: 'Eiffel Tower' },
      { prediction: 'New York City', gold: ['New York', 'city of New York state'] },
      { prediction: 'yes', gold: 'no' },
      { prediction: '', gold: 'x' },
    ];
    const [r, succ] = await Promise.all([
      run(['score'], rows.map((x) => JSON.stringify(x)).join('\n') + '\n'),
      run(['score', '--success', '--threshold', '0.9'], JSON.stringify(rows[1]) + '\n'),
    ]);
    assert.equal(r.status, 0, r.stderr);
    const out = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.equal(out.length, rows.length);
    rows.forEach((x, i) => {
      const s = scoreAnswer(x.prediction, x.gold);
      assert.deepEqual(out[i], { em: s.em, f1: s.f1, precision: s.precision, recall: s.recall });
    });
    assert.deepEqual(out[0], { em: 1, f1: 1, precision: 1, recall: 1 });
    assert.equal(JSON.parse(succ.stdout).success, 0);
  });

  test('trace-rl score: a bad line is an error naming its line; nothing on stdout', async () => {
    const [r, j] = await Promise.all([
      run(['score'], '{"prediction":"a","gold":"a"}\n\n{"prediction":"a"}\n'),
      run(['score'], '{"prediction":"a","gold":"a"}\n{oops\n'),
    ]);
    assert.equal(r.status, 2);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /line 3: gold/);
    assert.equal(j.status, 2);
    assert.equal(j.stdout, '');
    assert.match(j.stderr, /line 2: not valid JSON/);
  });

  test('trace-rl retriever serve answers Search-R1 requests from a JSONL corpus', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'trace-cli-'));
    const corpus = path.join(dir, 'c.jsonl');
    writeFileSync(
      corpus,
      [
        { id: 'a', contents: '"Alpha"\nAlpha is the first letter.' },
        { id: 'b', contents: '"Omega"\nOmega is the last letter.' },
      ]
        .map((x) => JSON.stringify(x))
        .join('\n'),
    );
    const child = spawn(process.execPath, [bin, 'retriever', 'serve', '--corpus', corpus, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let err = '';
        child.stderr.on('data', (d: Buffer) => {
          err += d.toString();
          const m = /at (http:\/\/\S+)\/retrieve/.exec(err);
          if (m) resolve(m[1]!);
        });
        child.on('exit', (code) => reject(new Error(`server exited ${code}: ${err}`)));
      });
      const hits = await new RetrieverClient({ url }).search('last letter', { k: 1 });
      assert.deepEqual(
        hits.map((h) => [h.id, h.title]),
        [['b', 'Omega']],
      );
    } finally {
      child.kill('SIGTERM');
    }
    const bad = await run(['retriever', 'serve', '--port', '0'], '');
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /exactly one of --corpus/);
  });
});
