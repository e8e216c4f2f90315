import type { Command } from 'commander';
import { configReference } from '../../train/config-docs.ts';
import { parseTrainConfig } from '../../train/config.ts';
import { configToYaml } from '../config-file.ts';
import { addConfigOptions, rawConfig } from '../config-flags.ts';

/** `trace-rl config`: the resolved configuration (defaults + file + flags) as YAML, or the reference. */
export function register(program: Command): void {
  const cmd = program
    .command('config')
    .description('print the resolved configuration (defaults, then --config file, then flags) as YAML; --docs prints the reference of every setting')
    .option('--docs', 'print the Markdown reference of every setting (docs/configuration.md)');
  addConfigOptions(cmd).action((opts: Record<string, unknown>) => {
    process.stdout.write(opts.docs ? configReference() : resolved(opts));
  });
}

const resolved = (opts: Record<string, unknown>) => configToYaml(parseTrainConfig(rawConfig(opts)));

/** Without a file or flags: the defaults, whatever the machine (no setting's default reads the environment). */
export const bareOutput = () => resolved({});
