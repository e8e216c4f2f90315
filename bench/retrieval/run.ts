/**
 * BM25 retrieval recall of gold supporting paragraphs with the question as the query (TRACE issue 3).
 * recall@k = mean over questions of |supporting ∩ top-k titles| / |supporting|; all@k = share of
 * questions with every supporting paragraph in the top k. Corpora: per-question (the question's own
 * paragraphs, HotpotQA distractor setting) and pooled (all distinct paragraphs of the sample).
 * Recall is deterministic; timings are min/median/max over repeated runs.
 *   npx tsx bench/retrieval/run.ts [--repeats 5]
 */
import os from 'node:os';
import { Bm25Index, loadDataset, pooledPassages, type DatasetFormat, type QaExample } from '../../src/env/index.ts';

const repeats = Number(process.argv[process.argv.indexOf('--repeats') + 1] || 5) || 5;
const KS = [1, 3, 5];

function evaluate(examples: QaExample[], mode: 'per-question' | 'pooled') {
  const t0 = performance.now();
  const pooled = mode === 'pooled' ? new Bm25Index(pooledPassages(examples)) : undefined;
  const build = performance.now() - t0;
  const recall = KS.map(() => 0);
  const all = KS.map(() => 0);
  const t1 = performance.now();
  for (const e of examples) {
    const index = pooled ?? new Bm25Index(e.paragraphs);
    const titles = index.search(e.question, Math.max(...KS)).map((p) => p.title);
    KS.forEach((k, i) => {
      const top = new Set(titles.slice(0, k));
      const hit = e.supporting.filter((s) => top.has(s)).length;
      recall[i]! += hit / e.supporting.length;
      if (hit === e.supporting.length) all[i]!++;
    });
  }
  const query = performance.now() - t1;
  return {
    recall: recall.map((r) => r / examples.length),
    all: all.map((a) => a / examples.length),
    corpus: pooled?.size ?? 10,
    buildMs: build,
    queryMsPerQuestion: query / examples.length,
  };
}

const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return `${s[0]!.toFixed(2)} / ${s[Math.floor(s.length / 2)]!.toFixed(2)} / ${s[s.length - 1]!.toFixed(2)}`;
};

console.log(
  `machine: ${os.cpus().length} cpus (${os.cpus()[0]?.model ?? '?'}), node ${process.version}, ${new Date().toISOString().slice(0, 10)}, repeats ${repeats}`,
);
console.log(
  '| dataset | corpus | passages | recall@1 | recall@3 | recall@5 | all@1 | all@3 | all@5 | build ms (min/med/max) | query ms/question (min/med/max) |',
);
console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
for (const name of ['hotpotqa', '2wikimultihopqa', 'musique'] as DatasetFormat[]) {
  const { examples } = loadDataset(name);
  for (const mode of ['per-question', 'pooled'] as const) {
    const runs = Array.from({ length: repeats }, () => evaluate(examples, mode));
    const r = runs[0]!;
    const pct = (x: number) => (100 * x).toFixed(1);
    console.log(
      `| ${name} (${examples.length}) | ${mode} | ${mode === 'pooled' ? r.corpus : `${examples[0]!.paragraphs.length} per q`} | ${r.recall.map(pct).join(' | ')} | ${r.all.map(pct).join(' | ')} | ${stats(runs.map((x) => x.buildMs))} | ${stats(runs.map((x) => x.queryMsPerQuestion))} |`,
    );
  }
}
