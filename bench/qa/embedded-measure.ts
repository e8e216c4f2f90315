/**
 * What the embedded policy learns on real QA: held-out EM / F1 of each run of a comparison folder
 * (from `trace-rl compare --config bench/qa/embedded-hotpotqa.yaml ...`), evaluated greedily with
 * `trace-rl eval --policy embedded --run DIR` on HotpotQA's held-out split (the questions the runs never
 * trained on) and, zero-shot, on all of 2Wiki, MuSiQue and Bamboogle; plus the untrained policy
 * (greedy and sampled) as "before". Prints per-run rows, per-strategy means, and trace − grpo paired
 * by seed. Run: nice -n 10 npx tsx bench/qa/embedded-measure.ts runs/qa-embedded
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/trace-rl.js', import.meta.url));
const dir = process.argv[2] ?? 'runs/qa-embedded';
const DATASETS = 'hotpotqa,2wiki:eval,musique:eval,bamboogle:eval';
type Table = { datasets: Record<string, { n: number; em: number; f1: number }>; average: { em: number; f1: number } };

function evaluate(extra: string[]): Table {
  const out = mkdtempSync(path.join(tmpdir(), 'embedded-measure-'));
  const stdout = execFileSync(
    process.execPath,
    [BIN, 'eval', '--policy', 'embedded', '--env', 'qa', '--datasets', DATASETS, '--out', out, '--json', '--quiet', ...extra],
    { encoding: 'utf8' },
  );
  return JSON.parse(stdout) as Table;
}

const row = (label: string, t: Table) =>
  `| ${label} | ${Object.values(t.datasets)
    .map((d) => `${d.em.toFixed(3)} / ${d.f1.toFixed(3)}`)
    .join(' | ')} | ${t.average.em.toFixed(3)} / ${t.average.f1.toFixed(3)} |`;

const first = evaluate([]);
console.log(
  `date ${new Date().toISOString()}; greedy unless said; EM / F1; n per dataset: ${Object.entries(first.datasets)
    .map(([k, v]) => `${k} ${v.n}`)
    .join(', ')}`,
);
console.log(
  `| policy | ${Object.keys(first.datasets).join(' | ')} | average |\n| --- | ${Object.keys(first.datasets)
    .map(() => '---')
    .join(' | ')} | --- |`,
);
console.log(row('untrained, greedy', first));
console.log(row('untrained, sampled (mean of 4 samples)', evaluate(['--samples', '4', '--temperature', '1'])));
const runs = readdirSync(dir)
  .filter((d) => /^[a-z-]+-s\d+$/.test(d))
  .sort();
const byStrategy = new Map<string, Map<number, Table>>();
for (const r of runs) {
  const t = evaluate(['--run', path.join(dir, r)]);
  console.log(row(r, t));
  const [, strategy, seed] = /^(.*)-s(\d+)$/.exec(r)!;
  if (!byStrategy.has(strategy!)) byStrategy.set(strategy!, new Map());
  byStrategy.get(strategy!)!.set(Number(seed), t);
}
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
for (const [s, m] of byStrategy)
  console.log(
    `${s}: mean HotpotQA held-out EM ${mean([...m.values()].map((t) => t.datasets.hotpotqa!.em)).toFixed(3)}, F1 ${mean([...m.values()].map((t) => t.datasets.hotpotqa!.f1)).toFixed(3)}, average EM ${mean([...m.values()].map((t) => t.average.em)).toFixed(3)} over ${m.size} seeds`,
  );
const trace = byStrategy.get('trace');
const grpo = byStrategy.get('grpo');
if (trace && grpo) {
  const d = [...trace.keys()].filter((k) => grpo.has(k)).map((k) => trace.get(k)!.datasets.hotpotqa!.em - grpo.get(k)!.datasets.hotpotqa!.em);
  const m = mean(d);
  const sd = Math.sqrt(d.reduce((a, x) => a + (x - m) ** 2, 0) / Math.max(1, d.length - 1));
  console.log(
    `trace − grpo, HotpotQA held-out EM, paired by seed: ${d.map((x) => x.toFixed(3)).join(', ')}; mean ${m.toFixed(3)} ± ${((2 * sd) / Math.sqrt(d.length)).toFixed(3)} (±2 s.e., n = ${d.length})`,
  );
}
