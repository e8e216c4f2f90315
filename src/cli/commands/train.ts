import type { Command } from 'commander';
import { performance } from 'node:perf_hooks';
import { parseTrainConfig, type TrainConfig } from '../../train/config.ts';
import { configSettings, type SettingDoc } from '../../train/config-docs.ts';
import { configToYaml, readConfigFile, setPath } from '../config-file.ts';
import { UsageError } from '../io.ts';
import { progressReporter } from '../progress.ts';

/**
 * Command-line flags that set one configuration field each (the config file's names, dotted). Their
 * help, allowed values and number conversion come from the schema (`configSettings`), so a setting is
 * described in one place.
 */
export const CONFIG_FLAGS = [
  ['--strategy <name>', 'strategy.name'],
  ['--budget <n>', 'strategy.budget'],
  ['--continuations <n>', 'strategy.continuations'],
  ['--estimator <name>', 'estimator'],
  ['--steps <n>', 'steps'],
  ['--seed <n>', 'seed'],
  ['--env <kind>', 'env.kind'],
  ['--predictor <kind>', 'predictor.kind'],
  ['--pool <n>', 'pool'],
  ['--concurrency <n>', 'engine.concurrency'],
] as const;

const SETTINGS = new Map(configSettings().map((s) => [s.path, s]));

function setting(path: string): SettingDoc {
  const s = SETTINGS.get(path);
  if (!s) throw new Error(`no configuration setting "${path}" (src/cli/commands/train.ts flag table)`);
  return s;
}

/** A flag's help: the setting's description, plus its allowed values when the description omits them. */
export function settingHelp(path: string): string {
  const s = setting(path);
  const missing = s.values?.some((v) => !s.description.includes(v));
  return missing ? `${s.description.replace(/\.?\s*$/, '')}. One of: ${s.values!.join(', ')}.` : s.description;
}

/** Builds the raw configuration: file first, then flags, then `--set path=value` pairs. */
export function rawConfig(opts: Record<string, unknown>): Record<string, unknown> {
  const raw = opts.config ? readConfigFile(String(opts.config)) : {};
  for (const [flag, path] of CONFIG_FLAGS) {
    const key = flag.slice(2, flag.indexOf(' ')).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
    const value = opts[key];
    if (value === undefined) continue;
    setPath(raw, path, setting(path).numeric ? toNumber(flag, value) : value);
  }
  for (const pair of (opts.set as string[] | undefined) ?? []) {
    const eq = pair.indexOf('=');
    if (eq < 1) throw new UsageError(`--set ${pair}: expected path=value, e.g. --set predictor.replaySteps=8`);
    const text = pair.slice(eq + 1);
    let value: unknown = text;
    try {
      value = JSON.parse(text);
    } catch {
      // not JSON: keep the string
    }
    setPath(raw, pair.slice(0, eq), value);
  }
  return raw;
}

function toNumber(flag: string, value: unknown): number {
  const n = Number(value);
  if (!Number.isFinite(n)) throw new UsageError(`${flag.split(' ')[0]} ${String(value)}: expected a number`);
  return n;
}

export function addConfigOptions(cmd: Command): Command {
  cmd.option('--config <file>', 'YAML or JSON configuration file (flags override it)');
  for (const [flag, path] of CONFIG_FLAGS) cmd.option(flag, settingHelp(path));
  cmd.option('--set <path=value...>', 'set any configuration field, e.g. --set predictor.replaySteps=8');
  return cmd;
}

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
    .option('--model <file.gguf>', settingHelp('policy.model'));
  addConfigOptions(cmd).action(async (opts: Record<string, unknown>) => {
    if (opts.policy !== undefined) opts.set = [...((opts.set as string[] | undefined) ?? []), `policy.kind=${String(opts.policy)}`];
    if (opts.model !== undefined) opts.set = [...((opts.set as string[] | undefined) ?? []), `policy.model=${String(opts.model)}`];
    let config: TrainConfig | undefined;
    let out: string;
    if (opts.resume) {
      out = String(opts.resume);
    } else {
      config = parseTrainConfig(rawConfig(opts));
      out = opts.out ? String(opts.out) : `runs/${config.strategy.name}-s${config.seed}`;
      process.stdout.write(`# trace-rl train: resolved configuration (stored in ${out}/run.sqlite)\n${configToYaml(config)}\n`);
    }
    const controller = new AbortController();
    const onSigint = () => {
      if (controller.signal.aborted) process.exit(130);
      process.stderr.write('\nstopping: finishing nothing more; the last completed step is kept (Ctrl-C again to quit at once)\n');
      controller.abort(new Error('interrupted'));
    };
    process.on('SIGINT', onSigint);
    const progress = opts.quiet ? undefined : progressReporter({ steps: config?.steps ?? 0, label: out });
    try {
      const { train } = await import('../../train/loop.ts'); // the loop loads jax-js, SQLite and the policies
      const result = await train({ out, config, resume: Boolean(opts.resume), clock: () => performance.now(), signal: controller.signal, onEvent: progress?.onEvent });
      progress?.stop();
      if (result.status === 'already-finished') process.stdout.write(`${out} has already finished all ${result.config.steps} steps; nothing to do (start a new run with another --out)\n`);
      else if (result.status === 'stopped') process.stdout.write(`stopped after ${result.completed} new step(s); resume with: trace-rl train --resume ${out}\n`);
      else process.stdout.write(`finished ${result.completed} step(s) in ${out}; report with: trace-rl report ${out}\n`);
    } finally {
      process.off('SIGINT', onSigint);
    }
  });
}
