/**
 * CLI start-up: `--version`, `solve roots` on a 2-prompt input, `score` on one line, the help of the
 * program and of the heaviest commands, `config` and a refused flag, against `node -e 0` (what any
 * Node command pays before its own code), for the packed package installed into an empty project
 * (compiled dist/: help and refusals from the command table, lazy subcommands), this checkout's bin
 * (TypeScript through tsx, as a contributor runs it; --tsx no leaves it out) and, with --before, the
 * code at an older commit (a git worktree with its own dist/ built, run as installed). One run,
 * interleaved, so load changes hit every variant alike.
 * Run: npx tsx bench/startup/run.ts [--reps 15] [--before 2d6cb33 | --before none] [--tsx no]
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { installPacked, REPO } from '../../scripts/install-packed.ts';

const { values } = parseArgs({
  options: { reps: { type: 'string', default: '15' }, before: { type: 'string', default: '2d6cb33' }, tsx: { type: 'string', default: 'yes' } },
});
const reps = Number(values.reps);
const before = values.before === 'none' ? undefined : values.before;

const beforeDir = before ? join(mkdtempSync(join(os.tmpdir(), 'trace-rl-before-')), 'repo') : undefined;
if (beforeDir) {
  execFileSync('git', ['worktree', 'add', '--detach', '-q', beforeDir, before!], { cwd: REPO });
  symlinkSync(join(REPO, 'node_modules'), join(beforeDir, 'node_modules'));
  // Run as installed (dist/, TRACE_RL_RUN_DIST), not through tsx: the same footing as the packed variant.
  execFileSync('bash', ['scripts/build.sh', '--noCheck'], { cwd: beforeDir, stdio: ['ignore', 'ignore', 'inherit'] });
}
const packed = installPacked();

/** `status`: the exit code the command must end with (a refused flag ends with 2). */
const cases: Array<{ name: string; args: string[]; input: string; status?: number }> = [
  { name: '--version', args: ['--version'], input: '' },
  { name: 'solve roots (2 prompts)', args: ['solve', 'roots'], input: '{"v":[0.1,0.5],"budget":4,"min":2,"max":64}' },
  { name: 'score (1 line)', args: ['score'], input: '{"prediction":"Paris","gold":"paris"}\n' },
  { name: '--help', args: ['--help'], input: '' },
  { name: 'train --help', args: ['train', '--help'], input: '' },
  { name: 'compare --help', args: ['compare', '--help'], input: '' },
  { name: 'env --help', args: ['env', '--help'], input: '' },
  { name: 'config', args: ['config'], input: '' },
  { name: 'train --no-such-flag (refused)', args: ['train', '--no-such-flag'], input: '', status: 2 },
];
const fmt = (x: number) => x.toFixed(3);
/** Each variant runs a case's arguments; `node -e 0` ignores them (the floor every variant stands on). */
const variants: Array<{ name: string; command: string[]; args?: string[] }> = [
  { name: 'node -e 0', command: [process.execPath, '-e', '0'], args: [] },
  ...(beforeDir
    ? [{ name: `before (${before}, dist)`, command: ['env', 'TRACE_RL_RUN_DIST=1', process.execPath, join(beforeDir, 'bin', 'trace-rl.js')] }]
    : []),
  ...(values.tsx === 'no' ? [] : [{ name: 'checkout (tsx)', command: [process.execPath, join(REPO, 'bin', 'trace-rl.js')] }]),
  { name: 'packed (dist)', command: [packed.bin] },
];

/**
 * Wall seconds and CPU seconds (user + system, from GNU time) of one run. On a shared machine the wall
 * time carries everyone else's load; start-up is single-threaded, so on a quiet machine wall ≈ CPU.
 */
function seconds(command: string[], args: string[], input: string, status: number): { wall: number; cpu: number } {
  const t = performance.now();
  const r = spawnSync('/usr/bin/time', ['-f', 'CPU %U %S', ...command, ...args], { input, encoding: 'utf8' });
  const wall = (performance.now() - t) / 1000;
  // `node -e 0` ignores the case's arguments and always ends with 0.
  if (r.status !== (args.length === 0 ? 0 : status)) throw new Error(`${command.join(' ')} ${args.join(' ')} ended with ${r.status}: ${r.stderr}`);
  const [, user, sys] = /CPU ([\d.]+) ([\d.]+)\s*$/.exec(r.stderr) ?? [];
  return { wall, cpu: Number(user) + Number(sys) };
}

const stats = (xs: number[]) => {
  const t = [...xs].sort((a, b) => a - b);
  return { min: t[0]!, median: t[Math.floor(t.length / 2)]!, max: t[t.length - 1]! };
};
const cell = (s: { min: number; median: number; max: number }) => `${fmt(s.min)} / ${fmt(s.median)} / ${fmt(s.max)}`;

console.log(
  `machine: ${os.cpus().length} cores (${os.cpus()[0]?.model ?? '?'}), node ${process.version}, load avg ${os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
);
console.log(
  `date: ${new Date().toISOString()}; ${reps} runs of each variant, interleaved, after one warm-up; packed = npm pack of this checkout installed in an empty project`,
);
console.log(
  `| command | measure | ${variants.map((v) => `${v.name} min / median / max (s)`).join(' | ')} | median ÷ node -e 0: ${variants
    .slice(1)
    .map((v) => v.name)
    .join(', ')} |`,
);
console.log(`|---|---|${variants.map(() => '---|').join('')}---|`);
try {
  for (const c of cases) {
    const runs = variants.map(() => [] as Array<{ wall: number; cpu: number }>);
    const run = (v: (typeof variants)[number]) => seconds(v.command, v.args ?? c.args, c.input, c.status ?? 0);
    variants.forEach(run);
    for (let i = 0; i < reps; i++) variants.forEach((v, k) => runs[k]!.push(run(v)));
    for (const measure of ['wall', 'cpu'] as const) {
      const s = runs.map((r) => stats(r.map((x) => x[measure])));
      const ratios = s
        .slice(1)
        .map((x) => `${(x.median / s[0]!.median).toFixed(1)}×`)
        .join(', ');
      console.log(`| ${c.name} | ${measure} | ${s.map(cell).join(' | ')} | ${ratios} |`);
    }
  }
} finally {
  if (beforeDir) execFileSync('git', ['worktree', 'remove', '--force', beforeDir], { cwd: REPO });
  rmSync(dirname(packed.project), { recursive: true, force: true });
}
