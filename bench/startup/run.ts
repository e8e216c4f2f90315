/**
 * CLI start-up (issue 20): `--version`, `solve roots` on a 2-prompt input and `score` on one line, for
 * the code before the package build (a git worktree of --before, run as it was: tsx + eager imports)
 * and for the packed package installed into an empty project (compiled dist/, lazy subcommands), in
 * one run, interleaved so load changes hit both alike.
 * Run: npx tsx bench/startup/run.ts [--reps 15] [--before 2d6cb33]
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { installPacked, REPO } from '../../scripts/install-packed.ts';

const { values } = parseArgs({ options: { reps: { type: 'string', default: '15' }, before: { type: 'string', default: '2d6cb33' } } });
const reps = Number(values.reps);

const beforeDir = join(mkdtempSync(join(os.tmpdir(), 'trace-rl-before-')), 'repo');
execFileSync('git', ['worktree', 'add', '--detach', '-q', beforeDir, values.before], { cwd: REPO });
symlinkSync(join(REPO, 'node_modules'), join(beforeDir, 'node_modules'));
const packed = installPacked();

const cases: Array<{ name: string; args: string[]; input: string }> = [
  { name: '--version', args: ['--version'], input: '' },
  { name: 'solve roots (2 prompts)', args: ['solve', 'roots'], input: '{"v":[0.1,0.5],"budget":4,"min":2,"max":64}' },
  { name: 'score (1 line)', args: ['score'], input: '{"prediction":"Paris","gold":"paris"}\n' },
];
const fmt = (x: number) => x.toFixed(3);
const variants = [
  { name: 'before', command: [process.execPath, join(beforeDir, 'bin', 'trace-rl.js')] },
  { name: 'after', command: [packed.bin] },
];

/**
 * Wall seconds and CPU seconds (user + system, from GNU time) of one run. On a shared machine the wall
 * time carries everyone else's load; start-up is single-threaded, so on a quiet machine wall ≈ CPU.
 */
function seconds(command: string[], args: string[], input: string): { wall: number; cpu: number } {
  const t = performance.now();
  const r = spawnSync('/usr/bin/time', ['-f', 'CPU %U %S', ...command, ...args], { input, encoding: 'utf8' });
  const wall = (performance.now() - t) / 1000;
  if (r.status !== 0) throw new Error(`${command.join(' ')} ${args.join(' ')} failed: ${r.stderr}`);
  const [, user, sys] = /CPU ([\d.]+) ([\d.]+)\s*$/.exec(r.stderr) ?? [];
  return { wall, cpu: Number(user) + Number(sys) };
}

const stats = (xs: number[]) => {
  const t = [...xs].sort((a, b) => a - b);
  return { min: t[0]!, median: t[Math.floor(t.length / 2)]!, max: t[t.length - 1]! };
};
const cell = (s: { min: number; median: number; max: number }) => `${fmt(s.min)} / ${fmt(s.median)} / ${fmt(s.max)}`;

console.log(`machine: ${os.cpus().length} cores (${os.cpus()[0]?.model ?? '?'}), node ${process.version}, load avg ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
console.log(`date: ${new Date().toISOString()}; before = ${values.before} (tsx, eager imports), after = npm pack of this checkout installed in an empty project; ${reps} runs each, interleaved, after one warm-up`);
console.log('| command | measure | before min / median / max (s) | after min / median / max (s) | median ratio before/after |');
console.log('|---|---|---|---|---|');
try {
  for (const c of cases) {
    const runs = variants.map(() => [] as Array<{ wall: number; cpu: number }>);
    variants.forEach((v) => seconds(v.command, c.args, c.input));
    for (let i = 0; i < reps; i++) variants.forEach((v, k) => runs[k]!.push(seconds(v.command, c.args, c.input)));
    for (const measure of ['wall', 'cpu'] as const) {
      const [b, a] = runs.map((r) => stats(r.map((x) => x[measure]))) as [ReturnType<typeof stats>, ReturnType<typeof stats>];
      console.log(`| ${c.name} | ${measure} | ${cell(b)} | ${cell(a)} | ${(b.median / a.median).toFixed(1)}× |`);
    }
  }
} finally {
  execFileSync('git', ['worktree', 'remove', '--force', beforeDir], { cwd: REPO });
  rmSync(dirname(packed.project), { recursive: true, force: true });
}
