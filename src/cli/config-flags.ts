/** The flags that set configuration fields, shared by train, compare, rollout and config. */
import { Option, type Command } from 'commander';
import { configSettings, type SettingDoc } from '../train/config-docs.ts';
import { applySetPairs, readConfigFile, setPath } from './config-file.ts';
import { parseDecimal, parseInteger } from './io.ts';

/**
 * Command-line flags that set one configuration field each (the config file's names, dotted). Their
 * help, allowed values and number conversion come from the schema (`configSettings`), so a setting is
 * described in one place.
 */
export const CONFIG_FLAGS = [
  ['--strategy <name>', 'strategy.name'],
  ['--budget <n>', 'strategy.budget'],
  ['--budget-unit <unit>', 'strategy.unit'],
  ['--continuations <n>', 'strategy.continuations'],
  ['--estimator <name>', 'estimator'],
  ['--steps <n>', 'steps'],
  ['--seed <n>', 'seed'],
  ['--env <kind>', 'env.kind'],
  ['--datasets <list>', 'env.datasets'],
  ['--retrieval <mode>', 'env.retrieval'],
  ['--retriever-url <url>', 'env.retrieverUrl'],
  ['--predictor <kind>', 'predictor.kind'],
  ['--pool <n>', 'pool'],
  ['--concurrency <n>', 'engine.concurrency'],
] as const;

// Built on first use: walking the schema costs 25–50 ms of CPU, which a command that runs without
// these flags (`trace-rl config`; the built CLI answers help from its command table) need not pay.
let settings: Map<string, SettingDoc> | undefined;

function setting(path: string): SettingDoc {
  settings ??= new Map(configSettings().map((s) => [s.path, s]));
  const s = settings.get(path);
  if (!s) throw new Error(`no configuration setting "${path}" (src/cli/config-flags.ts flag table)`);
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
    // Decimal digits only (Number() would read 0x10 as 16 and "" as 0); the schema checks the range.
    const name = flag.split(' ')[0]!;
    setPath(raw, path, setting(path).numeric ? (setting(path).type.startsWith('integer') ? parseInteger(name, value) : parseDecimal(name, value)) : value);
  }
  applySetPairs(raw, (opts.set as string[] | undefined) ?? [], 'predictor.replaySteps=8');
  return raw;
}

export function addConfigOptions(cmd: Command): Command {
  cmd.option('--config <file>', 'YAML or JSON configuration file (flags override it)');
  for (const [flag, path] of CONFIG_FLAGS) {
    // The help is read when it is shown (or written to the command table), not when the command is built.
    const option = new Option(flag);
    Object.defineProperty(option, 'description', { get: () => settingHelp(path), enumerable: true });
    cmd.addOption(option);
  }
  cmd.option('--set <path=value...>', 'set any configuration field, e.g. --set predictor.replaySteps=8');
  return cmd;
}
