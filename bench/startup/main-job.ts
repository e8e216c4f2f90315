/**
 * The main job as a newcomer meets it (issue 35): a fresh clone of HEAD, `npm ci`, then
 * `npx trace-rl compare` on its embedded defaults, timed; the README's timing line comes from here.
 * Each repeat is a new clone in a new temporary folder with empty trace-rl caches (TRACE_RL_CACHE for
 * the warm start, XDG_CACHE_HOME for the rest: a newcomer's first compare fits its warm start), so
 * nothing is cached between them except npm's own download cache (as on any machine that has run npm
 * before) and the OS page cache.
 *
 * Run (alone on the machine, ~5 min a repeat on 2 cores):
 *   npx tsx bench/startup/main-job.ts [--repeats 3] [--keep]
 * Prints each repeat's seconds for `npm ci` and for `compare`, the compare's headline table of the
 * first repeat, then min / median / max of each phase.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { repeats: { type: 'string', default: '3' }, keep: { type: 'boolean', default: false } } });
const repeats = Number(values.repeats);
if (!Number.isInteger(repeats) || repeats < 1) throw new Error(`--repeats ${values.repeats}: expected a whole number ≥ 1`);

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO, encoding: 'utf8' }).trim();

/** Runs a shell command in `cwd`, returns its wall seconds and output; a failure stops the benchmark. */
function timed(command: string, cwd: string, env: NodeJS.ProcessEnv = process.env): { seconds: number; stdout: string } {
  const t = performance.now();
  const r = spawnSync('bash', ['-c', command], { cwd, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, stdio: ['ignore', 'pipe', 'pipe'] });
  const seconds = (performance.now() - t) / 1000;
  if (r.status !== 0) throw new Error(`${command} (in ${cwd}) exited ${r.status}:\n${r.stderr.slice(-2000)}`);
  return { seconds, stdout: r.stdout };
}

const spread = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const median = s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
  return `min ${s[0]!.toFixed(0)} / median ${median.toFixed(0)} / max ${s.at(-1)!.toFixed(0)} s`;
};

console.log(
  `date ${new Date().toISOString()}, commit ${head}, node ${process.version}, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? '?'}), load ${os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')}`,
);
const install: number[] = [];
const compare: number[] = [];
for (let r = 0; r < repeats; r++) {
  const dir = join(mkdtempSync(join(os.tmpdir(), 'trace-rl-main-job-')), 'trace-rl');
  // A clone of the committed HEAD (uncommitted changes are not measured, as a newcomer would not have them).
  execFileSync('git', ['clone', '-q', '--no-hardlinks', REPO, dir]);
  execFileSync('git', ['checkout', '-q', head], { cwd: dir });
  const ci = timed('npm ci --no-audit --no-fund', dir);
  // Empty caches of its own (npm's XDG-independent download cache stays).
  const caches = mkdtempSync(join(os.tmpdir(), 'trace-rl-main-job-cache-'));
  const env = { ...process.env, TRACE_RL_CACHE: join(caches, 'trace-rl'), XDG_CACHE_HOME: caches };
  const job = timed('npx trace-rl compare', dir, env);
  rmSync(caches, { recursive: true, force: true });
  install.push(ci.seconds);
  compare.push(job.seconds);
  console.log(`repeat ${r + 1}: npm ci ${ci.seconds.toFixed(0)} s, npx trace-rl compare ${job.seconds.toFixed(0)} s`);
  // The table the README promises: compare's last lines (the report headline).
  if (r === 0) console.log(job.stdout.trimEnd().split('\n').slice(-8).join('\n'));
  if (!values.keep) rmSync(dirname(dir), { recursive: true, force: true });
  else console.log(`kept ${dir}`);
}
console.log(
  `npm ci: ${spread(install)}; npx trace-rl compare: ${spread(compare)}; total: ${spread(install.map((x, i) => x + compare[i]!))} (${repeats} repeats)`,
);
