import type { Command } from 'commander';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { STRATEGY_NAMES } from '../../allocate/index.ts';
import { RUN_DB, RunStore } from '../../store/index.ts';
import { parseTrainConfig } from '../../train/config.ts';
import { configToYaml } from '../config-file.ts';
import { UsageError } from '../io.ts';
import { addConfigOptions, rawConfig } from './train.ts';

const BIN = fileURLToPath(new URL('../../../bin/trace-rl.js', import.meta.url));

/**
 * `trace-rl compare`: the same environment, policy start and budget for every strategy, several
 * seeds, each run a resumable run folder under --out, run --jobs at a time in child processes (one
 * core each), then one report comparing them. Rerunning the same command resumes unfinished runs.
 */
export function register(program: Command): void {
  const cmd = program
    .command('compare')
    .description('run several strategies × seeds at equal budget on the same environment, then write one comparison report')
    .option('--strategies <list>', 'comma-separated strategies', 'trace,grpo')
    .option('--seeds <n>', 'seeds per strategy (0..n-1)', '3')
    .option('--out <dir>', 'folder for the runs and the report', 'runs/compare')
    .option('--jobs <n>', 'runs at once (each uses one core)', String(Math.max(1, Math.min(2, availableParallelism()))));
  addConfigOptions(cmd).action(async (opts: Record<string, unknown>) => {
    const strategies = String(opts.strategies).split(',').map((s) => s.trim()).filter(Boolean);
    for (const s of strategies) {
      if (!(STRATEGY_NAMES as readonly string[]).includes(s)) throw new UsageError(`--strategies: unknown strategy "${s}"; allowed: ${STRATEGY_NAMES.join(', ')}`);
    }
    const seeds = Number(opts.seeds);
    const jobs = Number(opts.jobs);
    if (!Number.isInteger(seeds) || seeds < 1) throw new UsageError(`--seeds ${String(opts.seeds)}: expected a whole number ≥ 1`);
    if (!Number.isInteger(jobs) || jobs < 1) throw new UsageError(`--jobs ${String(opts.jobs)}: expected a whole number ≥ 1`);
    if (opts.strategy || opts.seed) throw new UsageError('compare sets the strategy and seed of each run: use --strategies and --seeds instead of --strategy / --seed');
    const out = resolve(String(opts.out));
    const base = rawConfig(opts);
    // Validate once up front: a bad value stops everything before any run starts.
    const runs = strategies.flatMap((name) =>
      Array.from({ length: seeds }, (_, seed) => {
        const config = parseTrainConfig({ ...base, seed, strategy: { ...(base.strategy as object | undefined), name } });
        return { name, seed, dir: join(out, `${name}-s${seed}`), config };
      }),
    );
    mkdirSync(out, { recursive: true });
    process.stdout.write(`# trace-rl compare: ${strategies.join(', ')} × ${seeds} seed(s), ${jobs} at a time, in ${out}\n${configToYaml(runs[0].config)}\n`);
    const queue = [...runs];
    const failures: string[] = [];
    const worker = async () => {
      for (let run = queue.shift(); run; run = queue.shift()) {
        const code = await runChild(run.dir, run.config);
        if (code !== 0) failures.push(`${run.dir} (exit ${code})`);
      }
    };
    await Promise.all(Array.from({ length: Math.min(jobs, runs.length) }, worker));
    if (failures.length > 0) throw new UsageError(`runs failed: ${failures.join(', ')}; rerun the same command to resume them`);
    const { formatHeadline, writeReport } = await import('../../report/index.ts');
    const result = await writeReport({ runs: runs.map((r) => r.dir), out: join(out, 'report.html') });
    process.stdout.write(formatHeadline(result) + '\n');
  });
}

/** Runs (or resumes, or skips when finished) one run in a child process; its progress lines go to stderr. */
function runChild(dir: string, config: unknown): Promise<number> {
  let args: string[];
  if (existsSync(join(dir, RUN_DB))) {
    const store = RunStore.open(dir, { readonly: true });
    const finished = store.status() === 'finished';
    store.close();
    if (finished) {
      process.stderr.write(`${dir}: finished earlier, reused\n`);
      return Promise.resolve(0);
    }
    args = ['train', '--resume', dir];
  } else {
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'config.yaml');
    writeFileSync(file, configToYaml(config));
    args = ['train', '--config', file, '--out', dir];
  }
  return new Promise((resolvePromise) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, TRACE_RL_PLAIN_PROGRESS: '1' } });
    child.on('exit', (code, signal) => resolvePromise(code ?? (signal ? 1 : 0)));
  });
}
