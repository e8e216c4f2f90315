import { Command, CommanderError } from 'commander';
import { ZodError } from 'zod';
import { UsageError, formatZodError } from './io.ts';
import { commands } from './commands/index.ts';
import { ConfigError } from '../train/config.ts';
import { TrainError } from '../train/loop.ts';
import { RunStoreError } from '../store/run-store.ts';

export function buildProgram(): Command {
  const program = new Command('trace-rl')
    .description('TRACE: spend a fixed rollout budget where multi-turn agent RL learns the most')
    .version('0.1.0')
    .showHelpAfterError()
    .exitOverride();
  for (const register of commands) register(program);
  return program;
}

/** Runs the CLI; user errors become one stderr line and a non-zero exit, never a stack trace. */
export async function main(argv: string[]): Promise<void> {
  try {
    await buildProgram().parseAsync(argv);
  } catch (e) {
    if (e instanceof CommanderError) {
      process.exitCode = e.exitCode;
      return;
    }
    if (e instanceof UsageError || e instanceof ConfigError || e instanceof RunStoreError || e instanceof TrainError) {
      process.stderr.write(`trace-rl: ${e.message}\n`);
      process.exitCode = 2;
      return;
    }
    if (e instanceof ZodError) {
      process.stderr.write(`trace-rl: ${formatZodError(e)}\n`);
      process.exitCode = 2;
      return;
    }
    throw e;
  }
}
