/**
 * Peak memory (maxRSS) and time of the root solver with a huge m_max, each problem in a fresh process
 * (test/allocate/solve-in-fresh-process.ts), 3 runs each: min / median / max. Issue 19: before the m_max clamp and
 * table cap, 2,000 prompts with m_max 65,535 took tens of seconds and ~3 GB.
 *   npx tsx bench/solvers/memory.ts
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ONE = fileURLToPath(new URL('../../test/allocate/solve-in-fresh-process.ts', import.meta.url));
const cases: Array<[number, number, number]> = [
  [2000, 4000, 65_535],
  [20_000, 800, 65_535],
  [20_000, 160_000, 65_535],
  [10_000, 160_000, 64],
];
const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return `min ${s[0]!.toFixed(0)} median ${s[Math.floor(s.length / 2)]!.toFixed(0)} max ${s.at(-1)!.toFixed(0)}`;
};
for (const [n, budget, max] of cases) {
  const runs = Array.from(
    { length: 3 },
    () =>
      JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', ONE, String(n), String(budget), String(max)], { encoding: 'utf8' })) as {
        ms: number;
        maxRssMb: number;
        error?: string;
      },
  );
  const what = runs[0]!.error ? 'refused (table limit)' : 'solved';
  console.log(
    `${n} prompts, budget ${budget}, m_max ${max}: ${what}; time ms ${stats(runs.map((r) => r.ms))}; maxRSS MB ${stats(runs.map((r) => r.maxRssMb))}`,
  );
}
