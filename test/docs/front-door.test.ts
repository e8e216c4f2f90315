// The front door stays small enough to read: a newcomer's first screen holds the two commands they
// need (the main job on its embedded defaults, and the tests), README and BENCHMARKS stay within their
// sizes (history goes to docs/experiments/), and a clone stays light (tracked files ≤ 15 MB).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

const ROOT = join(import.meta.dirname, '../..');
const bytes = (file: string) => statSync(join(ROOT, file)).size;

test('README.md ≤ 12,000 bytes, and its first 24 lines hold `npx trace-rl compare` and `npm test`', () => {
  assert.ok(bytes('README.md') <= 12_000, `README.md is ${bytes('README.md')} bytes`);
  const screen = readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n').slice(0, 24).join('\n');
  assert.match(screen, /^npm ci && npx trace-rl compare\s/m);
  assert.match(screen, /^npm test\s/m);
});

test('BENCHMARKS.md ≤ 30,000 bytes', () => {
  assert.ok(bytes('BENCHMARKS.md') <= 30_000, `BENCHMARKS.md is ${bytes('BENCHMARKS.md')} bytes`);
});

test('the tracked files together ≤ 15 MB', () => {
  const files = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
  // A file deleted in the working tree but not yet from the index is not part of a clone's weight here.
  const total = files.reduce((sum, f) => {
    try {
      return sum + statSync(join(ROOT, f)).size;
    } catch {
      return sum;
    }
  }, 0);
  assert.ok(total <= 15_000_000, `tracked files: ${(total / 1e6).toFixed(2)} MB`);
});
