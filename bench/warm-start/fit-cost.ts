/**
 * What the default warm start costs a run's first start (the embedded policy's behaviour-cloning fit,
 * src/train/warm-start.ts; cached afterwards): `trace-rl train --steps 1` with an empty
 * TRACE_RL_CACHE, CPU seconds (user + system) of the whole command, this checkout against a baseline
 * checkout side by side, alternating, so a load change on the machine falls on both. Both must write the
 * same cached weights: the fit's arithmetic is pinned (golden runs start from it).
 *   npx tsx bench/warm-start/fit-cost.ts --baseline DIR [--rounds 5]
 * DIR: `git worktree add DIR <commit>` with node_modules linked and `npm run build` run there.
 * Prints min / median / max CPU-s per checkout and the ratio of medians.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';

const { values } = parseArgs({ options: { baseline: { type: 'string' }, rounds: { type: 'string', default: '5' } } });
if (!values.baseline) throw new Error('--baseline DIR: a built worktree of the commit to compare with (git worktree add DIR <commit>; npm run build there)');
const checkouts = { current: fileURLToPath(new URL('../..', import.meta.url)), baseline: resolve(values.baseline) };

/** CPU-ms of this process's waited-for children so far (clock ticks of 10 ms). */
const childrenCpuMs = () => {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[13]) + Number(fields[14])) * 10;
};

/** One first start in `checkout`: its CPU-s and the cached weights it wrote. */
function firstStart(checkout: string): { cpuS: number; weights: Buffer } {
  const work = mkdtempSync(join(tmpdir(), 'warm-start-cost-'));
  try {
    const before = childrenCpuMs();
    const args = [join(checkout, 'bin/trace-rl.js'), 'train', '--steps', '1', '--set', 'eval.questions=5', '--out', join(work, 'run'), '--quiet'];
    const r = spawnSync(process.execPath, args, { env: { ...process.env, TRACE_RL_CACHE: join(work, 'cache'), TRACE_RL_RUN_DIST: '1' }, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${checkout}: train failed: ${r.stderr.slice(-400)}`);
    const cpuS = (childrenCpuMs() - before) / 1000;
    const [file] = readdirSync(join(work, 'cache')).filter((f) => f.startsWith('warm-start-'));
    return { cpuS, weights: readFileSync(join(work, 'cache', file!)) };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

const samples: Record<string, number[]> = { current: [], baseline: [] };
for (let round = 0; round < Number(values.rounds); round++) {
  const a = firstStart(checkouts.current);
  const b = firstStart(checkouts.baseline);
  if (!a.weights.equals(b.weights)) throw new Error('the two checkouts cached different warm-start weights');
  samples.current!.push(a.cpuS);
  samples.baseline!.push(b.cpuS);
  process.stderr.write(`round ${round + 1}/${values.rounds}: current ${a.cpuS.toFixed(2)} CPU-s, baseline ${b.cpuS.toFixed(2)}\n`);
}
const stats = (xs: number[]) => {
  const s = [...xs].sort((x, y) => x - y);
  return { min: +s[0]!.toFixed(2), median: +s[Math.floor(s.length / 2)]!.toFixed(2), max: +s.at(-1)!.toFixed(2) };
};
const c = stats(samples.current!);
const b = stats(samples.baseline!);
console.log(
  `first start with the default warm start: current ${c.median} CPU-s [${c.min}, ${c.max}], baseline ${b.median} [${b.min}, ${b.max}], ratio ${(c.median / b.median).toFixed(2)}×; cached weights identical`,
);
console.log(JSON.stringify({ current: c, baseline: b, ratioOfMedians: +(c.median / b.median).toFixed(2) }));
