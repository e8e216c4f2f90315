import { Command, CommanderError } from 'commander';
import { existsSync, readFileSync } from 'node:fs';
import { addTableCommands, type CommandEntry } from './command-table.ts';
import { commands } from './commands/index.ts';
import { UserError } from '../util/user-error.ts';
import { escapeControl } from '../util/escape-control.ts';
import { systemErrorLine } from './errors.ts';
import { loadPlugins, pluginArgs } from './plugins.ts';

/** The package's version, read from package.json (one place to bump it). */
const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/**
 * The program with the subcommand named in `argv` registered, or all of them when none is named
 * (help, a typo): each command module and its dependencies load only when needed.
 */
export async function buildProgram(argv: string[] = []): Promise<Command> {
  const program = newProgram();
  const named = argv.slice(2).find((a) => !a.startsWith('-'));
  const wanted =
    argv.slice(2).some((a) => a === '--version' || a === '-V') && named === undefined
      ? []
      : named !== undefined && named in commands
        ? [named]
        : Object.keys(commands);
  for (const name of wanted) (await commands[name]!()).register(program);
  return program;
}

/** The program itself, without subcommands. */
function newProgram(): Command {
  return (
    new Command('trace-rl')
      .description('TRACE: spend a fixed rollout budget where multi-turn agent RL learns the most')
      .version(VERSION)
      .exitOverride()
      // Parser errors are printed by main() as one line with a pointer to --help (help and version still print).
      .configureOutput({ outputError: () => {} })
      .addHelpText('after', '\nAny command: --plugin <module> (repeatable) imports a module that registers strategies or environment or policy kinds first.')
  );
}

/**
 * The command table the build writes beside the compiled CLI (command-table.ts), or undefined in a
 * source checkout, which always loads the command modules themselves.
 */
export function builtCommandTable(): CommandEntry[] | undefined {
  const file = new URL('./command-table.json', import.meta.url);
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as CommandEntry[]) : undefined;
}

/**
 * Parses the arguments against the command table alone: help, a version query, an unknown command or
 * flag and a missing argument are answered (or thrown, as commander does) without loading any
 * command's module; true when the arguments name a command that runs, which then loads for real.
 * The table's commands are added to `program`, so a refusal names the command path from it.
 */
async function parsedByTable(program: Command, table: readonly CommandEntry[], argv: string[]): Promise<boolean> {
  let runs = false;
  addTableCommands(program, table, () => (runs = true));
  const unknown = unknownCommand(program, argv.slice(2));
  await program.parseAsync(unknown === undefined ? argv : [...argv.slice(0, 2), unknown]);
  return runs;
}

/**
 * Runs the CLI; user errors become one stderr line and exit code 2, never a stack trace. `table`: the
 * commands' declarations that answer help and refusals before any command module loads (the built
 * CLI's own by default; a plugin can add settings and kinds to what help shows, so with --plugin the
 * modules always load).
 */
export async function main(args: string[], table: readonly CommandEntry[] | undefined = builtCommandTable()): Promise<void> {
  let program: Command | undefined;
  let argv = args;
  try {
    const { plugins, rest } = pluginArgs(args);
    argv = rest;
    if (table !== undefined && plugins.length === 0) {
      program = newProgram();
      if (!(await parsedByTable(program, table, argv))) return;
    }
    await loadPlugins(plugins);
    program = await buildProgram(argv);
    const unknown = unknownCommand(program, argv.slice(2));
    // commander answers `nonsense --help` and `help nonsense` with the general help and exit 0: parse the
    // name alone instead, so commander raises its unknown-command error (with its suggestion).
    await program.parseAsync(unknown === undefined ? argv : [...argv.slice(0, 2), unknown]);
  } catch (e) {
    if (e instanceof CommanderError) {
      // Help and --version end with exit code 0; help shown for a missing subcommand is already printed.
      if (e.exitCode === 0) return;
      process.exitCode = 2;
      if (e.code === 'commander.help') return;
      const where = ['trace-rl', ...commandPath(program, argv.slice(2))].join(' ');
      // commander puts its suggestion on a second line: "…\n(Did you mean train?)".
      const message = e.message.replace(/^error: /, '').replace(/\n\(Did you mean (.+)\?\)$/, '; did you mean $1?');
      process.stderr.write(`${where}: ${message} (see ${where} --help)\n`);
      return;
    }
    if (e instanceof UserError) {
      process.stderr.write(`trace-rl: ${escapeControl(e.message.split('\n')[0]!)}\n`);
      process.exitCode = 2;
      return;
    }
    // A full disk, a read-only file system, a path through a file…: one line naming the path.
    const system = systemErrorLine(e);
    if (system !== undefined) {
      process.stderr.write(`trace-rl: ${system}\n`);
      process.exitCode = 2;
      return;
    }
    // A server failure a command did not report itself (a policy, an engine, an environment server):
    // one line, exit 1. Loaded only on this path.
    const { serverFailure } = await import('./server-failure.ts');
    const failure = serverFailure(e);
    if (failure) {
      process.stderr.write(`trace-rl: ${failure.server} failed: ${failure.message}; ${failure.fix}\n`);
      process.exitCode = 1;
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

/**
 * The command word (the first word; the one after `help`) when it names no command. The program's
 * own options are only --help and --version, so the first word is always the command.
 */
function unknownCommand(program: Command, args: string[]): string | undefined {
  const words = args.filter((a) => !a.startsWith('-'));
  const word = words[0] === 'help' ? words[1] : words[0];
  if (word === undefined || word === 'help') return undefined;
  return program.commands.some((c) => c.name() === word || c.aliases().includes(word)) ? undefined : word;
}

/** The subcommand names at the start of the arguments (`retriever serve`), for the --help pointer. */
function commandPath(program: Command | undefined, args: string[]): string[] {
  const path: string[] = [];
  let cmd = program;
  for (const a of args) {
    const sub = cmd?.commands.find((c) => c.name() === a || c.aliases().includes(a));
    if (!sub) break;
    path.push(a);
    cmd = sub;
  }
  return path;
}
