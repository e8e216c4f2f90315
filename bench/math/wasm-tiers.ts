/**
 * Which V8 compiler a code-sandbox `run` process should use for Python's WebAssembly (confine.ts's
 * RUN_COMPILER_FLAGS): the default tiering (baseline code first, hot functions optimised in the
 * background) against the baseline compiler only. Each trajectory is a fresh process, so what counts is
 * the CPU of a whole process: start, restore the memory snapshot, run its cells, exit. Measured for
 * both, alternating, on the same snapshot, unconfined (bubblewrap, seccomp and prlimit cost the same
 * under either compiler):
 *  - a fresh trajectory of one short cell (what math cells mostly are);
 *  - a trajectory of one cell of N Python loop iterations (where optimised code pays off).
 * CPU is the child's user + system time (read from /proc/self/stat's waited-for children).
 *   npx tsx bench/math/wasm-tiers.ts [--rounds 7] [--loop 3000000]
 * Prints min / median / max CPU-ms and cell ms per variant and the ratios of medians.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { RUN_COMPILER_FLAGS, sandboxCommand } from '../../src/env/math/sandbox/confine.ts';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '7' }, loop: { type: 'string', default: '3000000' } } });
const limits = { timeoutMs: 60_000, memoryMb: 96, outputBytes: 4000 };

/** CPU-ms of this process's waited-for children so far (clock ticks of 10 ms). */
const childrenCpuMs = () => {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[13]) + Number(fields[14])) * 10;
};

const snapshotCmd = sandboxCommand({ mode: 'snapshot', limits, unconfined: true });
const made = spawnSync(snapshotCmd.command, snapshotCmd.args, { maxBuffer: 64 << 20, env: {} });
const snapshot = Buffer.from((JSON.parse(made.stdout.toString()) as { snapshot: string }).snapshot, 'base64');

const run = sandboxCommand({ mode: 'run', limits, unconfined: true });
const variants: Record<string, string[]> = {
  tiering: run.args.filter((a) => !RUN_COMPILER_FLAGS.includes(a)),
  'baseline only': run.args,
};
const cells: Record<string, string> = {
  'one short cell': 'from fractions import Fraction\nprint(sum(Fraction(1, k) for k in range(1, 30)))',
  [`a loop of ${values.loop}`]: `print(sum(i * i for i in range(${values.loop})))`,
};

/**
 * One trajectory's process: its CPU and the cell's own time as the sandbox reports it. The snapshot is
 * a file on descriptor 4 (spawnSync feeds only stdin).
 */
function trajectory(args: string[], code: string, snapshotFd: number): { cpuMs: number; cellMs: number } {
  const before = childrenCpuMs();
  const r = spawnSync(run.command, args, {
    input: JSON.stringify({ id: 1, code }) + '\n',
    stdio: ['pipe', 'pipe', 'ignore', 'ignore', snapshotFd],
    env: {},
    maxBuffer: 1 << 20,
  });
  const answer = r.stdout
    .toString()
    .split('\n')
    .find((l) => l.includes('"id":1'));
  if (!answer) throw new Error(`the sandbox gave no answer: ${r.stdout.toString().slice(0, 200)}`);
  const parsed = JSON.parse(answer) as { status: string; ms: number };
  if (parsed.status !== 'ok') throw new Error(`the cell failed: ${answer.slice(0, 200)}`);
  return { cpuMs: childrenCpuMs() - before, cellMs: parsed.ms };
}

const dir = mkdtempSync(join(tmpdir(), 'trace-rl-wasm-tiers-'));
const snapshotFile = join(dir, 'snapshot.bin');
writeFileSync(snapshotFile, snapshot);

const samples: Record<string, { cpuMs: number[]; cellMs: number[] }> = {};
try {
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const [cellName, code] of Object.entries(cells)) {
      for (const [variant, args] of Object.entries(variants)) {
        const fd = openSync(snapshotFile, 'r');
        const r = trajectory(args, code, fd);
        closeSync(fd);
        const s = (samples[`${cellName} | ${variant}`] ??= { cpuMs: [], cellMs: [] });
        s.cpuMs.push(r.cpuMs);
        s.cellMs.push(r.cellMs);
      }
    }
    process.stderr.write(`round ${round + 1}/${values.rounds}\n`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { min: Math.round(s[0]!), median: Math.round(s[Math.floor(s.length / 2)]!), max: Math.round(s.at(-1)!) };
};
const summary: Record<string, unknown> = {};
for (const cellName of Object.keys(cells)) {
  const t = samples[`${cellName} | tiering`]!;
  const b = samples[`${cellName} | baseline only`]!;
  const [tc, bc, tm, bm] = [stats(t.cpuMs), stats(b.cpuMs), stats(t.cellMs), stats(b.cellMs)];
  summary[cellName] = { tiering: { cpuMs: tc, cellMs: tm }, baselineOnly: { cpuMs: bc, cellMs: bm }, cpuRatio: +(bc.median / tc.median).toFixed(2) };
  console.log(
    `${cellName}: process CPU tiering ${tc.median} ms [${tc.min}, ${tc.max}], baseline only ${bc.median} ms [${bc.min}, ${bc.max}] (${(bc.median / tc.median).toFixed(2)}×); ` +
      `cell tiering ${tm.median} ms, baseline only ${bm.median} ms (${(bm.median / tm.median).toFixed(2)}×)`,
  );
}
console.log(JSON.stringify(summary));
