/** paired.ts on a hand-made result: the seed-by-seed difference, its sign, and a clear error for an unknown row. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const script = new URL('./paired.ts', import.meta.url).pathname;
const run = (...args: string[]) =>
  execFileSync(process.execPath, ['--import', 'tsx', script, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

test('paired.ts: a − b per seed on same and disjoint prompts; arm labels containing "-" split at the right place', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paired-'));
  const file = join(dir, 'out.json');
  writeFileSync(
    file,
    JSON.stringify({
      seeds: [0, 1, 2],
      rows: [
        { arm: 'trace-blind', estimator: 'tree-grpo', sameBySeed: [0.7, 0.8, 0.9], disjointBySeed: [0.3, 0.3, 0.3] },
        { arm: 'trace-flip', estimator: 'tree-grpo', sameBySeed: [0.6, 0.7, 0.8], disjointBySeed: [0.4, 0.4, 0.4] },
      ],
    }),
  );
  const out = run(file, 'trace-blind/tree-grpo-trace-flip/tree-grpo');
  // Every seed differs by exactly +0.1 on the same prompts and −0.1 on disjoint ones, so the interval is a point.
  assert.match(out, /\| trace-blind\/tree-grpo − trace-flip\/tree-grpo \| \+0\.100 \[\+0\.100, \+0\.100\] \| −0\.100 \[−0\.100, −0\.100\] \|/);
  assert.throws(() => run(file, 'trace-blind/tree-grpo-grpo/grpo'), /cannot split/);
});
