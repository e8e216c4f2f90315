import { Command, CommanderError } from 'commander';
import { readFileSync } from 'node:fs';
import { commands } from './commands/index.ts';
import { UserError } from '../util/user-error.ts';

/** The package's version, read from package.json (one place to bump it). */
const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/**
 * The program with the subcommand named in `argv` registered, or all of them when none is named
 * (help, a typo): each command module and its dependencies load only when needed.
 */
export async function buildProgram(argv: string[] = []): Promise<Command> {
  const program = new Command('trace-rl')
    .description('TRACE: spend a fixed rollout budget where multi-turn agent RL learns the most')
    .version(VERSION)
    .showHelpAfterError()
    .exitOverride();
  const named = argv.slice(2).find((a) => !a.startsWith('-'));
  const wanted = argv.slice(2).some((a) => a === '--version' || a === '-V') && named === undefined
    ? []
    : named !== undefined && named in commands ? [named] : Object.keys(commands);
  for (const name of wanted) (await commands[name]!()).register(program);
  return program;
}

/** Runs the CLI; user errors become one stderr line and a non-zero exit, never a stack trace. */
export async function main(argv: string[]): Promise<void> {
  try {
    await (await buildProgram(argv)).parseAsync(argv);
  } catch (e) {
    if (e instanceof CommanderError) {
      process.exitCode = e.exitCode;
      return;
    }
    if (e instanceof UserError) {
      process.stderr.write(`trace-rl: ${e.message}\n`);
      process.exitCode = 2;
      return;
    }
    // zod is loaded only on this path: a schema error that escaped a command's own checks.
    const { ZodError } = await import('zod');
    if (e instanceof ZodError) {
      const { formatZodError } = await import('./io.ts');
      process.stderr.write(`trace-rl: ${formatZodError(e)}\n`);
      process.exitCode = 2;
      return;
    }
    throw e;
  }
}
