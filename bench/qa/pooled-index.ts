/**
 * Build time and memory of the pooled BM25 index over the four bundled datasets' paragraphs (Bamboogle
 * has none), cold (built and written to the cache) and warm (loaded from the cache), each in a fresh
 * child process so memory is not shared between runs. Memory = growth of RSS and of the V8 heap across
 * the build (after a GC). Run: nice -n 10 npx tsx bench/qa/pooled-index.ts [--repeats 3]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repeats = Number(process.argv[process.argv.indexOf('--repeats') + 1]) || 3;
const SELF = fileURLToPath(import.meta.url);

if (process.argv.includes('--child')) {
  const { pooledPassages, cachedIndex, loadSources } = await import('../../src/env/index.ts');
  const cacheDir = process.argv[process.argv.indexOf('--cache') + 1]!;
  const sources = loadSources(['hotpotqa', '2wiki', 'musique', 'bamboogle'].map((source) => ({ source, weight: 1, evalOnly: false })));
  const passages = pooledPassages(sources.flatMap((s) => s.examples));
  (globalThis as { gc?: () => void }).gc?.();
  const m0 = process.memoryUsage();
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const c = cachedIndex(passages, { cacheDir });
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const cpuMs = (cpu.user + cpu.system) / 1000;
  (globalThis as { gc?: () => void }).gc?.();
  const m1 = process.memoryUsage();
  c.index.search('warm up', 3);
  console.log(
    JSON.stringify({
      source: c.source,
      passages: passages.length,
      ms,
      cpuMs,
      rssMb: (m1.rss - m0.rss) / 2 ** 20,
      heapMb: (m1.heapUsed - m0.heapUsed) / 2 ** 20,
    }),
  );
  process.exit(0);
}

const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return `${s[0]!.toFixed(0)} / ${s[Math.floor(s.length / 2)]!.toFixed(0)} / ${s.at(-1)!.toFixed(0)}`;
};
const runs: Record<string, Array<{ ms: number; cpuMs: number; rssMb: number; heapMb: number; passages: number }>> = { built: [], hit: [] };
for (let i = 0; i < repeats; i++) {
  const cache = mkdtempSync(path.join(tmpdir(), 'bench-pool-'));
  for (let j = 0; j < 2; j++) {
    const out = execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', SELF, '--child', '--cache', cache], { encoding: 'utf8' });
    const r = JSON.parse(out.trim().split('\n').at(-1)!) as { source: string; ms: number; cpuMs: number; rssMb: number; heapMb: number; passages: number };
    runs[r.source]!.push(r);
  }
  rmSync(cache, { recursive: true, force: true });
}
console.log(`date ${new Date().toISOString()}, node ${process.version}, nproc ${availableParallelism()}, ${repeats} runs each (min / median / max)`);
console.log(`passages: ${runs.built[0]!.passages}`);
for (const [k, label] of [
  ['built', 'cold (build + write cache)'],
  ['hit', 'warm (load from cache)'],
] as const) {
  const r = runs[k]!;
  console.log(
    `${label}: wall ${stats(r.map((x) => x.ms))} ms, CPU ${stats(r.map((x) => x.cpuMs))} ms; RSS growth ${stats(r.map((x) => x.rssMb))} MB; heap growth ${stats(r.map((x) => x.heapMb))} MB`,
  );
}
