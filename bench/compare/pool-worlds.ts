/**
 * Round two's reading across worlds (issue 34; not pre-registered, docs/experiments/2026-12-01-final-r2.md):
 * the best trace minus grpo, final held-out success, pooled over each setting's three world seeds (7, 37,
 * 53) from the committed records of final-late, final-late-20 and final-r2, the world and the seed
 * resampled together. The late world on seed 7 alone (final-late + final-late-20, 25 seeds) is
 * final-late-20's pre-registered secondary reading.
 *
 * Run:  npx tsx bench/compare/pool-worlds.ts
 */
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readRecord } from './load.ts';
import { fmtPaired, pairedBootstrap } from './stats.ts';

const here = dirname(fileURLToPath(import.meta.url));
const records = ['out-final-late', 'out-final-late-20', 'out-final-r2'].flatMap((out) =>
  readdirSync(join(here, out, 'records')).map((f) => readRecord(join(here, out, 'records', f))),
);
/** Per setting: [trace arm, grpo arm] on each world; a pair's key is world · 100,000 + seed. */
const SETTINGS: Record<string, Array<[string, string, number]>> = {
  'late world, seed 7 (final-late + final-late-20)': [
    ['fl-trace-best', 'fl-grpo', 7],
    ['f20-trace-best', 'f20-grpo', 7],
  ],
  'late world': [
    ['fl-trace-best', 'fl-grpo', 7],
    ['f20-trace-best', 'f20-grpo', 7],
    ['r2l37-trace-best', 'r2l37-grpo', 37],
    ['r2l53-trace-best', 'r2l53-grpo', 53],
  ],
  'default world': [
    ['r2w-trace-best', 'r2w-grpo', 7],
    ['r2w37-trace-best', 'r2w37-grpo', 37],
    ['r2w53-trace-best', 'r2w53-grpo', 53],
  ],
  'math-world': [
    ['r2m-trace-best', 'r2m-grpo', 7],
    ['r2m37-trace-best', 'r2m37-grpo', 37],
    ['r2m53-trace-best', 'r2m53-grpo', 53],
  ],
};
const finals = (label: string, world: number, sampled: boolean) =>
  records.filter((r) => r.label === label).map((r) => [world * 100_000 + r.seed, (sampled ? r.sampledEvals : r.evals).at(-1)!.accuracy] as const);

console.log('| setting | pairs | best trace − grpo, greedy | sampled |\n|---|---|---|---|');
for (const [name, arms] of Object.entries(SETTINGS)) {
  const delta = (sampled: boolean) =>
    pairedBootstrap(new Map(arms.flatMap(([t, , w]) => finals(t, w, sampled))), new Map(arms.flatMap(([, g, w]) => finals(g, w, sampled))));
  const [greedy, sampled] = [delta(false), delta(true)];
  console.log(`| ${name} | ${greedy.n} | ${fmtPaired(greedy)} | ${fmtPaired(sampled)} |`);
}
