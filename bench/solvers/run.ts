/**
 * Solver timings (issue 2): root solver at 10,000 prompts, M = 160,000, m_max = 64; prefix solver for
 * 1,024 prompts × 16 rollouts × 8 turns; knapsack (weighted) solver for reference.
 * Run: npx tsx bench/solvers/run.ts [--reps 15]
 */
import os from 'node:os';
import { solveKnapsack, solvePrefixes, solveRoots, type PrefixInput } from '../../src/allocate/index.ts';
import { createRng } from '../../src/util/rng.ts';

const repsArg = process.argv.indexOf('--reps');
const reps = repsArg > 0 ? Number(process.argv[repsArg + 1]) : 15;
const warmup = 3;

function time(label: string, run: () => unknown): void {
  for (let i = 0; i < warmup; i++) run();
  const ms: number[] = [];
  for (let i = 0; i < reps; i++) {
    const t = performance.now();
    run();
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  const f = (x: number) => x.toFixed(1).padStart(7);
  console.log(`${label.padEnd(64)} min ${f(ms[0])} ms  median ${f(ms[Math.floor(ms.length / 2)])} ms  max ${f(ms[ms.length - 1])} ms`);
}

const rng = createRng(2026);
const v = Array.from({ length: 10_000 }, () => rng.next());
const check = solveRoots({ v, budget: 160_000, min: 2, max: 64 });
console.log(
  `machine: ${os.cpus().length} cores (${os.cpus()[0]?.model ?? '?'}), node ${process.version}, ${os.platform()} ${os.arch()}, load avg ${os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
);
console.log(`date: ${new Date().toISOString()}; ${reps} timed runs after ${warmup} warm-up runs each`);
console.log(`root problem: method ${check.method}, ${check.m.filter((m) => m > 0).length} prompts selected, objective ${check.objective.toFixed(3)}`);
time('root solver: 10,000 prompts (v ~ U(0,1)), M = 160,000, m ∈ {0} ∪ [2, 64]', () => solveRoots({ v, budget: 160_000, min: 2, max: 64 }));
const vBeta = Array.from({ length: 10_000 }, () => Math.min(1, Math.max(0, 0.5 + 0.5 * Math.sin(Math.PI * (rng.next() - 0.5)))));
time('root solver: same, v arcsine-distributed (≈ Beta(½, ½), many near 0 and 1)', () => solveRoots({ v: vBeta, budget: 160_000, min: 2, max: 64 }));
time('root solver without pruning (full sweep over all s), reference', () => solveRoots({ v, budget: 160_000, min: 2, max: 64 }, { method: 'full-sweep' }));

// 1,024 prompts × 16 bare rollouts × 8 turns: 16 × 7 intermediate prefixes each, budget m · N.
const prompts: PrefixInput[][] = Array.from({ length: 1024 }, (_, i) =>
  Array.from({ length: 16 * 7 }, (_, k) => ({ id: `q${i}/${k >> 3}/${(k % 7) + 1}`, q: rng.next(), r: rng.next() < 0.5 ? 1 : 0 })),
);
for (const N of [2, 8]) {
  time(`prefix solver: 1,024 prompts × 16 rollouts × 8 turns, N = ${N} (budget ${16 * N}/prompt)`, () => {
    for (const ps of prompts) solvePrefixes(ps, 16 * N);
  });
}

const p = Array.from({ length: 1024 }, () => Math.round(rng.next() * 8) / 8);
const k = solveKnapsack({ p, budget: 8192, min: 2, max: 16 });
time(`knapsack solver: 1,024 prompts (p in eighths), M = 8,192, [2, 16] (${k.method})`, () => solveKnapsack({ p, budget: 8192, min: 2, max: 16 }));
time('knapsack solver, same without the DP pruning (plain DP), reference', () => solveKnapsack({ p, budget: 8192, min: 2, max: 16 }, { method: 'full-dp' }));
const pBig = Array.from({ length: 10_000 }, () => rng.next());
time('knapsack solver: 10,000 prompts (p ~ U(0,1)), M = 160,000, [2, 64] (dp)', () => solveKnapsack({ p: pBig, budget: 160_000, min: 2, max: 64 }));
