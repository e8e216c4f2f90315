/**
 * The root solver's memory is bounded whatever m_max says (issue 19: 2,000 prompts with m_max 65,535
 * took 21 s and 3 GB; 20,000 passed 6 GB). m_max is first clamped to what the budget allows (exact:
 * no feasible allocation changes), then the tables are capped at TABLE_LIMIT entries with a one-line
 * error naming the m_max that fits. Peak memory is measured in a fresh process (maxRSS).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { solveKnapsack, solveRoots } from '../../src/allocate/index.ts';
import { createRng } from '../../src/util/rng.ts';
import { runCli } from '../reliability/cli-in-process.ts';
import { bruteWeighted } from './brute-force.ts';

const SCRIPT = fileURLToPath(new URL('./solve-in-fresh-process.ts', import.meta.url));
const measure = (n: number, budget: number, max: number) =>
  JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', SCRIPT, String(n), String(budget), String(max)], { encoding: 'utf8', timeout: 120_000 })) as {
    error?: string;
    spent?: number;
    maxRssMb: number;
  };

test('20,000 prompts, m_max 65,535, budget 160,000: a one-line error naming the m_max that fits, in bounded memory', () => {
  const r = measure(20_000, 160_000, 65_535);
  assert.match(
    r.error ?? '',
    /^max: 20,000 prompts × \(m_max 65,535 − m_min 2\) = 1,310,660,000 table entries exceed the solver's limit of 16,777,216 \(256 MB\); lower max to at most 840/,
  );
  assert.ok(r.maxRssMb < 300, `peak ${r.maxRssMb.toFixed(0)} MB`);
});

test('20,000 prompts, m_max 65,535, budget 800: clamped to the budget and solved in bounded memory', () => {
  const r = measure(20_000, 800, 65_535);
  assert.equal(r.spent, 800);
  assert.ok(r.maxRssMb < 700, `peak ${r.maxRssMb.toFixed(0)} MB`);
});

test('2,000 prompts, m_max 65,535, budget 4,000 (3 GB before): solved in bounded memory', () => {
  const r = measure(2000, 4000, 65_535);
  assert.equal(r.spent, 4000);
  assert.ok(r.maxRssMb < 500, `peak ${r.maxRssMb.toFixed(0)} MB`);
});

test('clamping m_max to the budget is exact: same optimum as brute force with m_max = 65,535', () => {
  const rng = createRng(11);
  for (let trial = 0; trial < 40; trial++) {
    const n = 1 + rng.int(4);
    const v = Array.from({ length: n }, () => rng.next());
    const M = 2 + rng.int(10);
    const brute = bruteWeighted(
      v.map((x) => ({ v: x, w: 1 })),
      M,
      2,
      M,
    );
    if (brute === null) continue;
    const { objective, m } = solveRoots({ v, budget: M, min: 2, max: 65_535 });
    assert.ok(Math.abs(objective - brute) < 1e-9, `trial ${trial}: ${objective} vs ${brute}`);
    assert.equal(
      m.reduce((a, b) => a + b, 0),
      M,
    );
    const w = v.map((p) => p * (1 - p) ** 2);
    const k = solveKnapsack({ p: v, budget: M, min: 2, max: 65_535 });
    const bk = bruteWeighted(
      v.map((p, i) => ({ v: p, w: w[i]! })),
      M,
      2,
      M,
    )!;
    assert.ok(Math.abs(k.objective - bk) < 1e-9, `knapsack trial ${trial}`);
  }
});

test('trace-rl solve roots: the table limit is one line on stderr, exit 2', async () => {
  const v = Array.from({ length: 20_000 }, (_, i) => (i % 97) / 97);
  const r = await runCli(['solve', 'roots'], JSON.stringify({ v, budget: 160_000, min: 2, max: 65_535 }));
  assert.equal(r.code, 2);
  assert.match(r.stderr, /^trace-rl: input\.max: 20,000 prompts × .* lower max to at most 840 \(or the budget\)\n$/);
  assert.equal(r.stdout, '');
});
