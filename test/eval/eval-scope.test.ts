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

test("eval says how many of a dataset's questions it evaluates, of which split (its size), and how to evaluate them all; without --out, where it writes", async () => {
  const root = mkdtempSync(path.join(tmpdir(), 'trace-eval-scope-'));
  try {
    const file = path.join(root, 'mine.jsonl');
    writeFileSync(
      file,
      Array.from({ length: 50 }, (_, i) => JSON.stringify({ id: `q${i}`, question: `Who founded company ${i}?`, answer: `person ${i}` })).join('\n') + '\n',
    );
    const base = ['eval', '--env', 'qa', '--datasets', file, '--policy', 'embedded', '--max-turns', '2'];
    const held = await runCli([...base, '--out', path.join(root, 'held')]);
    assert.equal(held.code, 0, held.stderr);
    const m = /eval: (\S+): (\d+) of (\d+) held-out questions \(of 50 in the dataset; training never sees these; --split all evaluates every question\)/.exec(
      held.stderr,
    );
    assert.ok(m, held.stderr);
    assert.ok(Number(m[2]) > 0 && Number(m[2]) < 50, m[0]);
    assert.equal(m[2], m[3], 'every held-out question is evaluated, and the line says the split holds that many');
    const some = await runCli([...base, '--questions', '3', '--out', path.join(root, 'some')]);
    assert.match(some.stderr, new RegExp(`eval: \\S+: 3 of ${m[3]} held-out questions \\(of 50 in the dataset; .*; --questions 3\\)`));
    const all = await runCli([...base, '--split', 'all', '--out', path.join(root, 'all')]);
    assert.equal(all.code, 0, all.stderr);
    assert.match(all.stderr, /eval: \S+: 50 of 50 questions\n/);
    // No --out: the folder it writes is named (in the working directory's runs/).
    const cwd = await runCli([...base.slice(0, 1), '--quiet', ...base.slice(1)], '', {}, root);
    assert.equal(cwd.code, 0, cwd.stderr);
    assert.match(cwd.stderr, new RegExp(`eval: no --out given: writing to ${path.join(root, 'runs', 'eval-embedded-qa').replace(/[/.]/g, '\\$&')} \\(`));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
