import { interruptible } from '../until-signal.ts';
import type { Command } from 'commander';
import { performance } from 'node:perf_hooks';
import { PolicyConfigError, policyKinds } from '../../policy/registry.ts';
import { parseTrainConfig, storedTrainConfig, type TrainConfig } from '../../train/config.ts';
import { configToYaml } from '../config-file.ts';
import { addConfigOptions, rawConfig, settingHelp } from '../config-flags.ts';
import { UsageError } from '../io.ts';
import { progressReporter } from '../progress.ts';
import { failedStepRefusal, keptRunClause, serverFailure, serverFailureLine } from '../server-failure.ts';

/** `trace-rl train`: one run, stored in --out, resumable with --resume. */
export function register(program: Command): void {
  const cmd = program
    .command('train')
    .description('run TRACE (or a baseline) on the embedded defaults or a config; every step is stored and resumable')
    .option('--out <dir>', 'run folder to create (default runs/<strategy>-s<seed>)')
    .option('--resume <dir>', 'continue the run in this folder from its last completed step')
    .option('--quiet', 'no progress display')
    // train's own: `rollout` has a --policy of its own (the external server), so these are not shared config flags.
    .option('--policy <kind>', settingHelp('policy.kind'))
    .option('--model <file.gguf>', settingHelp('policy.model (tiny-lm)'))
    .option('--base-url <url>', 'tinker: the Tinker-compatible training server (policy.baseUrl), e.g. http://127.0.0.1:8080 for trace-rl serve --tinker');
  addConfigOptions(cmd).action(async (opts: Record<string, unknown>) => {
    if (opts.policy !== undefined) opts.set = [...((opts.set as string[] | undefined) ?? []), `policy.kind=${String(opts.policy)}`];
    if (opts.model !== undefined) opts.set = [...((opts.set as string[] | undefined) ?? []), `policy.model=${String(opts.model)}`];
    if (opts.baseUrl !== undefined) opts.set = [...((opts.set as string[] | undefined) ?? []), `policy.baseUrl=${String(opts.baseUrl)}`];
    const { RunStore } = await import('../../store/index.ts'); // SQLite: loaded only when a run starts
    let config: TrainConfig | undefined;
    let out: string;
    let steps: number;
    let resumeSteps: number | undefined;
    let stored: TrainConfig | undefined;
    if (opts.resume) {
      out = String(opts.resume);
      if (opts.out !== undefined) throw new UsageError(`--out and --resume ${out} together: --resume continues the run in its own folder; drop --out`);
      ({ steps, resumeSteps, stored } = resumePlan(RunStore.open(out, { readonly: true }), out, opts));
    } else {
      config = parseTrainConfig(rawConfig(opts));
      out = opts.out ? String(opts.out) : `runs/${config.strategy.name}-s${config.seed}`;
      // Fail before printing anything: an existing run, an unusable folder, a model that is not a GGUF.
      RunStore.checkNew(out);
      try {
        await policyKinds.get(config.policy.kind).checkBeforeRun?.(config.policy as never);
      } catch (e) {
        if (e instanceof PolicyConfigError) throw new UsageError(e.message);
        throw e;
      }
      steps = config.steps;
      process.stdout.write(`# trace-rl train: resolved configuration (stored in ${out}/run.sqlite once the run starts)\n${configToYaml(config)}\n`);
    }
    const interrupt = interruptible('finishing nothing more; the last completed step is kept (Ctrl-C again to quit at once)');
    const progress = opts.quiet ? undefined : progressReporter({ steps, label: out });
    try {
      const { train } = await import('../../train/loop.ts'); // the loop loads jax-js, SQLite and the policies
      const result = await train({
        out,
        config,
        resume: Boolean(opts.resume),
        steps: resumeSteps,
        ...(opts.resume && opts.baseUrl !== undefined ? { baseUrl: String(opts.baseUrl) } : {}),
        clock: () => performance.now(),
        wallClock: () => Date.now(),
        signal: interrupt.signal,
        onEvent: progress?.onEvent,
        // A step whose every trajectory failed (the engine or an environment server is down) ends the run, unstored.
        // …and one where only some failed says so, even under --quiet.
        review: failedStepRefusal(config ?? stored!, (line) => process.stderr.write(`trace-rl train: ${line}\n`)),
      }).catch((e: unknown) => {
        progress?.stop();
        const failure = serverFailure(e);
        if (!failure) throw e;
        process.stderr.write(serverFailureLine('train', failure, keptRunClause(out, `trace-rl train --resume ${out}`)) + '\n');
        process.exitCode = 1;
        return undefined;
      });
      if (!result) return;
      progress?.stop();
      if (result.status === 'already-finished')
        process.stdout.write(
          `${out} has already finished all ${result.config.steps} steps; nothing to do (continue it with --resume ${out} --steps N, or start a new run with another --out)\n`,
        );
      else if (result.status === 'stopped') {
        process.stdout.write(`stopped after ${result.completed} new step(s); resume with: trace-rl train --resume ${out}\n`);
        // The shell's convention for a command ended by Ctrl-C, after a clean stop.
        process.exitCode = 130;
      } else process.stdout.write(`finished ${result.completed} step(s) in ${out}; report with: trace-rl report ${out}\n`);
    } finally {
      interrupt.done();
    }
  });
}

/**
 * Flags a resumed run may take: --steps (a new total) and --base-url (the engine's address now, for an
 * engine that moved with the run's saved states), both stored in the run; the rest must match the stored configuration.
 */
const RESUMABLE = new Set(['steps', 'policy.baseUrl']);

/**
 * What `--resume DIR` with flags means: the stored configuration stays; a flag that repeats a stored
 * value is fine, one that changes it is refused (naming both values), except --steps, which sets a
 * new total and says so.
 */
function resumePlan(
  store: { config(): unknown; configRevision(): number; close(): void },
  out: string,
  opts: Record<string, unknown>,
): { steps: number; resumeSteps?: number; stored: TrainConfig } {
  let stored: TrainConfig;
  try {
    stored = storedTrainConfig(store);
  } finally {
    store.close();
  }
  const given = rawConfig(opts);
  let resumeSteps: number | undefined;
  for (const [path, value] of leaves(given)) {
    if (path === 'steps') {
      resumeSteps = value as number;
      continue;
    }
    if (RESUMABLE.has(path)) {
      const had = (stored.policy as { baseUrl?: unknown }).baseUrl;
      if (had !== value) process.stderr.write(`${out}: policy.baseUrl ${String(had)} → ${String(value)} (--base-url; stored in the run)\n`);
      continue;
    }
    const have = path.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], stored);
    if (JSON.stringify(have) !== JSON.stringify(value)) {
      throw new UsageError(
        `--resume ${out}: ${path} ${JSON.stringify(value)} conflicts with the run's stored ${JSON.stringify(have) ?? '(unset)'}; a resumed run keeps its configuration (only --steps, and --base-url for an engine that moved, may change): drop the flag, or start a new run with --out`,
      );
    }
  }
  if (resumeSteps !== undefined && resumeSteps !== stored.steps)
    process.stderr.write(`${out}: steps ${stored.steps} → ${resumeSteps} (--steps; stored in the run)\n`);
  return { steps: resumeSteps ?? stored.steps, resumeSteps, stored };
}

/** [dotted path, value] for every leaf of a plain object. */
function leaves(o: Record<string, unknown>, prefix = ''): Array<[string, unknown]> {
  return Object.entries(o).flatMap(([k, v]) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? leaves(v as Record<string, unknown>, `${prefix}${k}.`)
      : [[`${prefix}${k}`, v] as [string, unknown]],
  );
}
