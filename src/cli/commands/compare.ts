import type { Command } from 'commander';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { optionsTakenBy, strategies as strategyFamily, strategyOptionKeys, type StrategyName } from '../../allocate/index.ts';
import { envKinds } from '../../env/registry.ts';
import { RUN_DB, RunStore } from '../../store/index.ts';
import { parseTrainConfig, storedTrainConfig, type TrainConfig } from '../../train/config.ts';
import { loadedPlugins } from '../../util/plugins.ts';
import { configToYaml } from '../config-file.ts';
import { parseInteger, UsageError } from '../io.ts';
import { addConfigOptions, rawConfig } from '../config-flags.ts';
import { spendProblem } from './compare-spend.ts';

const BIN = fileURLToPath(new URL('../../../bin/trace-rl.js', import.meta.url));

/**
 * `trace-rl compare`: the same environment, policy start and budget for every strategy, several
 * seeds, each run a resumable run folder under --out, run --jobs at a time in child processes (one
 * core each), then one report comparing them. Rerunning the same command resumes unfinished runs (and
 * finished ones to a larger --steps); a folder holding a run with other settings is refused.
 */
export function register(program: Command): void {
  const cmd = program
    .command('compare')
    .description('run several strategies × seeds at equal budget on the same environment, then write one comparison report')
    .option('--strategies <list>', 'comma-separated strategies', 'trace,grpo')
    .option(
      '--trace <which>',
      'the trace arm: recommended (uniform roots, N = ½, and per prompt the solver’s choice between one more bare rollout and a continuation at a prefix from turn 2 on; chosen by pre-registered comparisons) or paper (the published method)',
      'recommended',
    )
    .option('--seeds <n>', 'seeds per strategy (0..n-1)', '3')
    .option('--out <dir>', 'folder for the runs and the report', 'runs/compare')
    .option('--jobs <n>', 'runs at once (each uses one core)', String(Math.max(1, Math.min(2, availableParallelism()))))
    .option('--quiet', 'no progress lines from the runs (failures are still reported)');
  addConfigOptions(cmd).action(async (opts: Record<string, unknown>) => {
    const strategies = String(opts.strategies)
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    for (const s of strategies) {
      if (!strategyFamily.has(s)) throw new UsageError(`--strategies: unknown strategy "${s}"; allowed: ${strategyFamily.names().join(', ')}`);
    }
    const seeds = parseInteger('--seeds', opts.seeds, { min: 1 });
    const jobs = parseInteger('--jobs', opts.jobs, { min: 1 });
    if (opts.strategy || opts.seed)
      throw new UsageError('compare sets the strategy and seed of each run: use --strategies and --seeds instead of --strategy / --seed');
    if (opts.trace !== 'recommended' && opts.trace !== 'paper') throw new UsageError(`--trace: "${String(opts.trace)}" is not one of recommended, paper`);
    const out = resolve(String(opts.out));
    const base = withEqualTokens(rawConfig(opts));
    const strategyOptions = strategyOptionsFor(strategies as StrategyName[], (base.strategy ?? {}) as Record<string, unknown>, opts.trace);
    // Validate once up front: a bad value stops everything before any run starts.
    const runs = strategies.flatMap((name) =>
      Array.from({ length: seeds }, (_, seed) => {
        const config = parseTrainConfig({ ...base, seed, strategy: { ...trajectoriesUnit(name, strategyOptions(name as StrategyName)), name } });
        return { name, seed, dir: join(out, `${name}-s${seed}`), config, resumeSteps: undefined as number | undefined };
      }),
    );
    // parseTrainConfig refuses a strategy that cannot spend B on this pool, so every run spends the same B
    // per step; a dynamic sampler (dapo), whose unit is whole groups, is read by the tokens it really spends.
    const budgets = new Set(
      runs.filter((r) => !dynamicSampling(r.name) || strategies.length === 1).map((r) => `${r.config.strategy.budget} ${r.config.strategy.unit}`),
    );
    if (budgets.size > 1)
      throw new UsageError(`compare: unequal budgets ${[...budgets].join(', ')}; every strategy must get the same --budget and --budget-unit`);
    // A run folder left by an earlier compare continues only as the same run (another --trace, --set or
    // budget in the same --out would otherwise report the earlier run's numbers as this arm's).
    for (const run of runs) run.resumeSteps = heldRunSteps(run.dir, run.config);
    mkdirSync(out, { recursive: true });
    process.stdout.write(`# trace-rl compare: ${strategies.join(', ')} × ${seeds} seed(s), ${jobs} at a time, in ${out}\n${configToYaml(runs[0].config)}\n`);
    const sampler = runs.find((r) => dynamicSampling(r.name) && r.config.strategy.unit !== runs[0].config.strategy.unit);
    if (sampler)
      process.stdout.write(
        `# ${sampler.name} counts whole groups: it runs at ${sampler.config.strategy.budget} trajectories a step; the report shows the tokens it really spends\n`,
      );
    // Every new run of a comparison starts from the same warm start (policy.bc.seed is not the run's
    // seed): fit it here once, before runs that would each fit it at the same time.
    const starts = new Map(
      runs.filter((r) => !existsSync(join(r.dir, RUN_DB))).map((r) => [JSON.stringify([r.config.env, r.config.policy, r.config.engine.maxTurns]), r.config]),
    );
    if (starts.size > 0) {
      const { cacheWarmStart } = await import('../../train/components.ts');
      for (const config of starts.values()) {
        const started = Date.now();
        const { fitted } = await cacheWarmStart(config);
        if (fitted && !opts.quiet)
          process.stderr.write(`warm start fitted once for the runs that share it (${((Date.now() - started) / 1000).toFixed(1)} s; cached)\n`);
      }
    }
    const queue = [...runs];
    const failures: Array<{ dir: string; code: number; line: string }> = [];
    const worker = async () => {
      // After a failure no new run starts: a server that is down fails them all the same way.
      for (let run = queue.shift(); run && failures.length === 0; run = queue.shift()) {
        const child = await runChild(run.dir, run.config, run.resumeSteps, Boolean(opts.quiet));
        if (child.code !== 0) failures.push({ dir: run.dir, ...child });
        else {
          // A run process that ends well has stored a finished run; the report reads only what is stored.
          const missing = unfinished(run.dir);
          if (missing) failures.push({ dir: run.dir, code: 1, line: `its train process exited 0 but ${missing}` });
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(jobs, runs.length) }, worker));
    if (failures.length > 0) {
      // One line for the person: the first failed run's own line (it names the server, the call and the fix).
      const [first, ...more] = failures;
      const cause = first!.line.replace(/^trace-rl train: /, '') || `exit ${first!.code}`;
      process.stderr.write(
        `trace-rl compare: ${first!.dir} failed: ${cause}${more.length ? ` (and ${more.length} more run(s): ${more.map((f) => f.dir).join(', ')})` : ''}; rerun the same command to resume the unfinished runs (finished ones are reused)\n`,
      );
      process.exitCode = first!.code === 2 ? 2 : 1;
      return;
    }
    // Equal budgets are checked in what each run stored, not trusted to its strategy (a plugin's, or one
    // that stops early): a comparison resting on an arm that spent less or more is no comparison.
    const unequal = runs.flatMap((r) => {
      // A dynamic sampler's budget is whole mixed groups, its spend whatever finding them cost (said above).
      if (dynamicSampling(r.name)) return [];
      const problem = spendProblem(r.config, storedSteps(r.dir));
      return problem === undefined ? [] : [{ dir: r.dir, problem }];
    });
    if (unequal.length > 0) {
      const [first, ...more] = unequal;
      process.stderr.write(
        `trace-rl compare: ${first!.dir} ${first!.problem}${more.length ? ` (and ${more.length} more run(s): ${more.map((u) => u.dir).join(', ')})` : ''}; the arms did not spend equal budgets, so no report is written: give a --budget every strategy spends (a strategy must plan up to its budget)\n`,
      );
      process.exitCode = 1;
      return;
    }
    const { formatHeadline, writeReport } = await import('../../report/index.ts');
    const result = await writeReport({ runs: runs.map((r) => r.dir), out: join(out, 'report.html') });
    process.stdout.write(formatHeadline(result) + '\n');
  });
}

/**
 * Each compared strategy's options: the config's strategy options that strategy takes (budget for all,
 * N for the tree strategies, …), and trace's preset named by `--trace` (recommended or paper). An
 * option none of the compared strategies takes is a usage error, not silently dropped.
 */
function strategyOptionsFor(
  strategies: readonly StrategyName[],
  given: Record<string, unknown>,
  trace: unknown,
): (name: StrategyName) => Record<string, unknown> {
  for (const key of Object.keys(given)) {
    if (key === 'name') continue;
    if (!strategies.some((n) => strategyOptionKeys(n).includes(key)))
      throw new UsageError(`strategy.${key}: none of the compared strategies (${strategies.join(', ')}) takes this option`);
  }
  return (name) => ({ ...(name === 'trace' ? { preset: trace } : {}), ...optionsTakenBy(name, given) });
}

/**
 * compare's budget when the command gives none: equal generated tokens, the cost unit the equal-budget
 * finals compare at, at the environment kind's measured figure (`EnvKind.equalTokenBudget`): a tree
 * strategy's continuations re-generate only the turns after their branch point, so at equal
 * trajectories it would pay less than grpo for the same budget. Kinds without a measured figure keep
 * train's default (192 trajectories a step).
 */
export function withEqualTokens(base: Record<string, unknown>): Record<string, unknown> {
  const strategy = (base.strategy ?? {}) as Record<string, unknown>;
  if (strategy.budget !== undefined || strategy.unit !== undefined) return base;
  const env = parseTrainConfig(base).env;
  const budget = envKinds.get(env.kind).equalTokenBudget?.(env);
  return budget === undefined ? base : { ...base, strategy: { ...strategy, unit: 'tokens', budget } };
}

const dynamicSampling = (name: string) => strategyFamily.get(name).dynamicSampling === true;

/** A dynamic sampler's target is whole groups (⌊B / G⌋ mixed ones): beside a budget in turns or tokens it runs at train's default trajectories. */
function trajectoriesUnit(name: string, options: Record<string, unknown>): Record<string, unknown> {
  if (!dynamicSampling(name) || options.unit === undefined || options.unit === 'trajectories') return options;
  const { unit: _unit, budget: _budget, ...rest } = options;
  return rest;
}

/**
 * For a folder that already holds a run: undefined when it is this run as configured now, the new total
 * when only `steps` differs (the run is resumed to it); any other difference is refused, naming the
 * first field that differs. Nothing (undefined) for a folder without a run.
 */
function heldRunSteps(dir: string, config: TrainConfig): number | undefined {
  if (!existsSync(join(dir, RUN_DB))) return undefined;
  const store = RunStore.open(dir, { readonly: true });
  let stored: TrainConfig;
  try {
    stored = storedTrainConfig(store);
  } finally {
    store.close();
  }
  const diff = firstDifference({ ...stored, steps: config.steps }, config);
  if (diff !== undefined)
    throw new UsageError(
      `compare: ${dir} holds a run with other settings (${diff}: ${JSON.stringify(valueAt(stored, diff))} there, ${JSON.stringify(valueAt(config, diff))} now); use another --out folder, or the same flags to continue it`,
    );
  return stored.steps === config.steps ? undefined : config.steps;
}

/** The dotted path of the first field where two JSON values differ, or undefined when they are equal. */
function firstDifference(a: unknown, b: unknown, at = ''): string | undefined {
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return JSON.stringify(a) === JSON.stringify(b) ? undefined : at;
  for (const k of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
    const d = firstDifference((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], at ? `${at}.${k}` : k);
    if (d !== undefined) return d;
  }
  return undefined;
}

const valueAt = (o: unknown, path: string) => path.split('.').reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], o);

/** The steps a run stored (its metrics, including what each step spent). */
function storedSteps(dir: string): Array<{ step: number; metrics: Record<string, number> }> {
  const store = RunStore.open(dir, { readonly: true });
  try {
    return store.steps();
  } finally {
    store.close();
  }
}

/** Why `dir` holds no finished run (undefined when it does). */
function unfinished(dir: string): string | undefined {
  if (!existsSync(join(dir, RUN_DB))) return `${join(dir, RUN_DB)} is missing`;
  const store = RunStore.open(dir, { readonly: true });
  try {
    return store.status() === 'finished' ? undefined : `the run's status is ${store.status()}, not finished`;
  } finally {
    store.close();
  }
}

/**
 * Runs (or resumes, or skips when finished) one run in a child process; its progress lines go to stderr
 * as they come, except its last line, which is held: a failed run's last line is its one-line failure,
 * which compare reports in its own line.
 */
function runChild(dir: string, config: unknown, resumeSteps: number | undefined, quiet: boolean): Promise<{ code: number; line: string }> {
  let args: string[];
  if (existsSync(join(dir, RUN_DB))) {
    const store = RunStore.open(dir, { readonly: true });
    const finished = store.status() === 'finished';
    store.close();
    if (finished && resumeSteps === undefined) {
      if (!quiet) process.stderr.write(`${dir}: finished earlier, reused\n`);
      return Promise.resolve({ code: 0, line: '' });
    }
    args = ['train', '--resume', dir, ...(resumeSteps === undefined ? [] : ['--steps', String(resumeSteps)]), ...(quiet ? ['--quiet'] : [])];
  } else {
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'config.yaml');
    writeFileSync(file, configToYaml(config));
    args = ['train', '--config', file, '--out', dir, ...(quiet ? ['--quiet'] : [])];
  }
  // A run of a plugin's strategy (or environment, or policy) needs the plugin in its own process too.
  const plugins = loadedPlugins().flatMap((url) => ['--plugin', fileURLToPath(url)]);
  return new Promise((resolvePromise) => {
    const child = spawn(process.execPath, [BIN, ...plugins, ...args], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, TRACE_RL_PLAIN_PROGRESS: '1' },
    });
    let held = '';
    let partial = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop()!;
      for (const line of lines) {
        if (held) process.stderr.write(held + '\n');
        held = line;
      }
    });
    child.on('close', (code, signal) => {
      const last = partial || held;
      const status = code ?? (signal ? 1 : 0);
      if (partial && held) process.stderr.write(held + '\n');
      if (status === 0 && last) process.stderr.write(last + '\n');
      resolvePromise({ code: status, line: status === 0 ? '' : last });
    });
  });
}
