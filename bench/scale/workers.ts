/**
 * The scale bench's step split across worker processes by prompt (results in BENCHMARKS.md, "A step
 * split across worker processes"). One scripted zero-latency server in its own process (server.ts);
 * per repetition, one client process per worker count (split-client.ts), one after the other, each
 * running the same step (P prompts × 8 rollouts, ≤ 5 turns, completions mode) at the same total
 * concurrency: `1` in process, `N` split across N worker processes. Reported per worker count, min /
 * median / max over the repetitions: requests/s of the step, requests/s per worker (each worker's
 * requests over its own wall time), CPU per 1,000 requests (coordinator + workers), peak RSS of the
 * coordinator and of the largest worker, and the workers' start (spawn and build, not in the step).
 *
 * Run: npx tsx bench/scale/workers.ts [--workers 1,2,4] [--trajectories 2000] [--reps 3] [--concurrency 256]
 */
import { spawn } from 'node:child_process';
import { cpus, loadavg, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { startServer } from './start-server.ts';
import type { WorkerStats } from '../../src/rollout/split/index.ts';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : fallback;
};
const counts = arg('workers', '1,2,4').split(',').map(Number);
const trajectories = Number(arg('trajectories', '2000'));
const reps = Number(arg('reps', '3'));
const concurrency = Number(arg('concurrency', '256'));
const here = (f: string) => fileURLToPath(new URL(f, import.meta.url));
const tsx = ['--import', 'tsx'];

interface Sample {
  workers: number;
  requests: number;
  wallMs: number;
  startMs: number;
  coordinatorCpuUs: number;
  coordinatorPeakRssMB: number;
  workerStats: WorkerStats[];
}

function measure(workers: number, port: number): Promise<Sample> {
  return new Promise((resolve, reject) => {
    const args = [...tsx, here('./split-client.ts'), '--workers', String(workers), '--trajectories', String(trajectories)];
    args.push('--concurrency', String(concurrency), '--port', String(port));
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    child.on('exit', (code) => {
      if (code !== 0) reject(new Error(`${workers} workers: exit ${code}\n${out}`));
      else resolve(JSON.parse(out.trim().split('\n').at(-1)!) as Sample);
    });
  });
}

const fmt = (xs: number[], d: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return `${s[0]!.toFixed(d)} / ${s[Math.floor((s.length - 1) / 2)]!.toFixed(d)} / ${s.at(-1)!.toFixed(d)}`;
};
/** A sample's whole CPU: the coordinator's, and each worker's for its share (none in process). */
const cpuUs = (s: Sample) => s.coordinatorCpuUs + s.workerStats.reduce((a, w) => a + w.cpuUs, 0);

console.log(
  `# split-step bench — ${new Date().toISOString()}, node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), ` +
    `${(totalmem() / 2 ** 30).toFixed(0)} GiB, load ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}; ${trajectories} trajectories, concurrency ${concurrency} in all, ${reps} repetitions`,
);
const { port, child } = await startServer('codepoints');
try {
  const samples = new Map<number, Sample[]>(counts.map((n) => [n, []]));
  for (let r = 0; r < reps; r++) for (const n of counts) samples.get(n)!.push(await measure(n, port));
  console.log(`\n## ${samples.get(counts[0]!)![0]!.requests} requests a step, min / median / max of ${reps}`);
  console.log(
    '| workers | requests/s, step | requests/s per worker (own wall) | step requests/s ÷ workers | CPU-s per 1k requests (all processes) | coordinator CPU-s per 1k | peak RSS MB, coordinator | peak RSS MB, largest worker | worker start ms |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const [n, xs] of samples) {
    const rate = (s: Sample) => s.requests / (s.wallMs / 1000);
    const perWorker = xs.flatMap((s) => s.workerStats.map((w) => w.requests / (w.wallMs / 1000)));
    console.log(
      `| ${n === 1 ? '1 (in process)' : n} | ${fmt(xs.map(rate), 0)} | ${n === 1 ? fmt(xs.map(rate), 0) : fmt(perWorker, 0)} | ${fmt(
        xs.map((s) => rate(s) / n),
        0,
      )} | ${fmt(
        xs.map((s) => cpuUs(s) / 1e6 / (s.requests / 1000)),
        3,
      )} | ${fmt(
        xs.map((s) => s.coordinatorCpuUs / 1e6 / (s.requests / 1000)),
        3,
      )} | ${fmt(
        xs.map((s) => s.coordinatorPeakRssMB),
        0,
      )} | ${
        n === 1
          ? '—'
          : fmt(
              xs.map((s) => Math.max(...s.workerStats.map((w) => w.peakRssMB))),
              0,
            )
      } | ${
        n === 1
          ? '—'
          : fmt(
              xs.map((s) => s.startMs),
              0,
            )
      } |`,
    );
  }
} finally {
  child.kill('SIGTERM');
}
