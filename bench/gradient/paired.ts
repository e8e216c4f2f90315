/**
 * Paired differences between rows of a gradient-bench result (run.ts --json): cosine of row a minus
 * row b, seed by seed (the arms read the same seeds' prompts), mean and 95 % bootstrap interval over
 * seeds, on the same and on disjoint prompts. A row is `arm/estimator`, e.g. `trace-blind/trace:tree`.
 *
 *   npx tsx bench/gradient/paired.ts out.json trace-blind/trace:tree-trace-flip/trace:tree [a/x-b/y …]
 *
 * Pairs are written `a-b` with the first `-` that is followed by an arm label of the file.
 */
import { readFileSync } from 'node:fs';
import { pairedBootstrap } from '../compare/stats.ts';

interface ResultRow {
  arm: string;
  estimator: string;
  sameBySeed: number[];
  disjointBySeed: number[];
}
const [file, ...pairs] = process.argv.slice(2);
if (!file || pairs.length === 0) throw new Error('usage: paired.ts out.json armA/estA-armB/estB [...]');
const result = JSON.parse(readFileSync(file, 'utf8')) as { seeds: number[]; rows: ResultRow[] };
const byName = new Map(result.rows.map((r) => [`${r.arm}/${r.estimator}`, r]));
const row = (name: string) => {
  const r = byName.get(name);
  if (!r) throw new Error(`${file} has no row ${name}; rows: ${[...byName.keys()].join(', ')}`);
  return r;
};
const bySeed = (xs: number[]) => new Map(result.seeds.map((s, i) => [s, xs[i]!]));
const f = (x: number) => `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(3)}`;
console.log('| a − b | same prompts | disjoint prompts |\n|---|---|---|');
for (const pair of pairs) {
  const cut = [...pair.matchAll(/-/g)].map((m) => m.index!).find((i) => byName.has(pair.slice(0, i)) && byName.has(pair.slice(i + 1)));
  if (cut === undefined) throw new Error(`cannot split ${pair} into two rows of ${file}`);
  const [a, b] = [row(pair.slice(0, cut)), row(pair.slice(cut + 1))];
  const cell = (side: 'sameBySeed' | 'disjointBySeed') => {
    const d = pairedBootstrap(bySeed(a[side]), bySeed(b[side]));
    return `${f(d.mean)} [${f(d.lo)}, ${f(d.hi)}]`;
  };
  console.log(`| ${pair.slice(0, cut)} − ${pair.slice(cut + 1)} | ${cell('sameBySeed')} | ${cell('disjointBySeed')} |`);
}
