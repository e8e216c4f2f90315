/**
 * Issue 35: `trace-rl eval --datasets my.jsonl` evaluated the held-out split of the file (10 of 50
 * questions) and said "10/10 questions". It now says what of each dataset it evaluates, and why.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runCli } from '../helpers/run-cli.ts';

test('eval says how many of a dataset\'s questions it evaluates, and how to evaluate them all', async () => {
  const root = mkdtempSync(path.join(tmpdir(), 'trace-eval-scope-'));
  try {
    const file = path.join(root, 'mine.jsonl');
    writeFileSync(file, Array.from({ length: 50 }, (_, i) => JSON.stringify({ id: `q${i}`, question: `Who founded company ${i}?`, answer: `person ${i}` })).join('\n') + '\n');
    const base = ['eval', '--env', 'qa', '--datasets', file, '--policy', 'embedded', '--max-turns', '2'];
    const held = await runCli([...base, '--out', path.join(root, 'held')]);
    assert.equal(held.code, 0, held.stderr);
    const m = /eval: (\S+): (\d+) of 50 questions \(the held-out split, which training never sees; --split all evaluates every question\)/.exec(held.stderr);
    assert.ok(m, held.stderr);
    assert.ok(Number(m[2]) > 0 && Number(m[2]) < 50, m[0]);
    const all = await runCli([...base, '--split', 'all', '--out', path.join(root, 'all')]);
    assert.equal(all.code, 0, all.stderr);
    assert.match(all.stderr, /eval: \S+: 50 of 50 questions\n/);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
