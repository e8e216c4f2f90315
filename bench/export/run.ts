/**
 * Export benchmark (results in BENCHMARKS.md, section "Export to trainers"): one stored TRACE step of
 * the embedded world with 1,000 leaves (budget B = 1,000 over a pool of 256), exported repeatedly:
 *  - rows: buildBatch (estimator + tokenisation + per-token rows), in memory;
 *  - each file form serialised to bytes (verl Parquet, TRL Parquet, verl JSONL, prefix trie JSONL);
 *  - exportRun end to end (open the store, read its stored prompts, rows, write verl Parquet).
 * Run: npx tsx bench/export/run.ts [--reps 7]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createEstimator } from '../../src/advantage/index.ts';
import { buildBatch, exportRun, serializeBatch, storedText } from '../../src/export/index.ts';
import { RunStore } from '../../src/store/index.ts';
import { train } from '../../src/train/index.ts';

const reps = Number(process.argv[process.argv.indexOf('--reps') + 1]) || 7;
const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { min: s[0]!, median: s[Math.floor(s.length / 2)]!, max: s.at(-1)! };
};
const fmt = (x: { min: number; median: number; max: number }) => `${x.min.toFixed(0)} / ${x.median.toFixed(0)} / ${x.max.toFixed(0)}`;

const root = mkdtempSync(join(tmpdir(), 'trace-export-bench-'));
const dir = join(root, 'run');
const t0 = performance.now();
await train({
  out: dir,
  config: { steps: 1, pool: 256, strategy: { name: 'trace', budget: 1000 }, eval: { every: 100, questions: 10 } },
  clock: () => performance.now(),
});
const setupMs = performance.now() - t0;
const store = RunStore.open(dir, { readonly: true });
const trees = store.trees(0);
const { render } = storedText(trees, store.treeRecords(0), dir);
store.close();
const estimator = createEstimator('trace');

const time = (f: () => unknown) => {
  const a = performance.now();
  f();
  return performance.now() - a;
};
const rows: number[] = [];
const forms = { 'verl Parquet': [] as number[], 'TRL Parquet': [] as number[], 'verl JSONL': [] as number[], 'prefix trie JSONL': [] as number[] };
const sizes: Record<string, number> = {};
const endToEnd: number[] = [];
let batch = buildBatch(trees, { step: 0, estimator, render });
for (let r = 0; r < reps; r++) {
  rows.push(time(() => (batch = buildBatch(trees, { step: 0, estimator, render }))));
  for (const [name, [format, container]] of Object.entries({
    'verl Parquet': ['verl', 'parquet'],
    'TRL Parquet': ['trl', 'parquet'],
    'verl JSONL': ['jsonl', 'jsonl'],
    'prefix trie JSONL': ['trie', 'jsonl'],
  } as const)) {
    const a = performance.now();
    sizes[name] = (await serializeBatch(batch, format, container)).length;
    forms[name as keyof typeof forms].push(performance.now() - a);
  }
  const a = performance.now();
  await exportRun({ dir, step: 0, format: 'verl', out: join(root, 'step-0.parquet') });
  endToEnd.push(performance.now() - a);
}
const leaves = batch.rows.length + batch.meta.skipped_leaves;
let tokens = 0;
for (const row of batch.rows) tokens += row.prompt_ids.length + row.response_ids.length;
let trieTokens = 0;
for (const n of batch.nodes.values()) trieTokens += n.ids.length;

console.log(`# export bench — ${new Date().toISOString().slice(0, 10)}, node ${process.version}, ${cpus().length} cores, reps ${reps}`);
console.log(
  `step: ${trees.length} trees, ${leaves} leaves, ${batch.rows.length} rewarded rows, ${tokens} row tokens (byte tokenizer), ${trieTokens} trie tokens; made in ${(setupMs / 1000).toFixed(1)} s`,
);
console.log('| what | ms min / median / max | bytes |');
console.log('|---|---|---|');
console.log(`| rows in memory (buildBatch: estimator + tokens) | ${fmt(stats(rows))} | |`);
for (const [name, xs] of Object.entries(forms)) console.log(`| rows → ${name} bytes | ${fmt(stats(xs))} | ${sizes[name]} |`);
console.log(`| exportRun end to end (store → verl Parquet file) | ${fmt(stats(endToEnd))} | |`);
rmSync(root, { recursive: true, force: true });
