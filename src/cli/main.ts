import { Command, CommanderError } from 'commander';
import { userErrorLine } from './errors.ts';
import { commands } from './commands/index.ts';

export function buildProgram(): Command {
  const program = new Command('trace-rl')
    .description('TRACE: spend a fixed rollout budget where multi-turn agent RL learns the most')
    .version('0.1.0')
    .exitOverride()
    // Parser errors are printed by main() as one line with a pointer to --help (help and version still print).
    .configureOutput({ outputError: () => {} });
  for (const register of commands) register(program);
  return program;
}

/** Runs the CLI; user errors become one stderr line and exit code 2, never a stack trace. */
export async function main(argv: string[]): Promise<void> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
  } catch (e) {
    if (e instanceof CommanderError) {
      // Help and --version end with exit code 0; help shown for a missing subcommand is already printed.
      if (e.exitCode === 0) return;
      if (e.code === 'commander.help') {
        process.exitCode = 2;
        return;
      }
      const where = ['trace-rl', ...commandPath(program, argv.slice(2))].join(' ');
      process.stderr.write(`${where}: ${e.message.replace(/^error: /, '')} (see ${where} --help)\n`);
      process.exitCode = 2;
      return;
    }
    const line = userErrorLine(e);
    if (line === undefined) throw e;
    process.stderr.write(`trace-rl: ${line}\n`);
    process.exitCode = 2;
  }
}

/** The subcommand names at the start of the arguments (`retriever serve`), for the --help pointer. */
function commandPath(program: Command, args: string[]): string[] {
  const path: string[] = [];
  let cmd = program;
  for (const a of args) {
    const sub = cmd.commands.find((c) => c.name() === a || c.aliases().includes(a));
    if (!sub) break;
    path.push(a);
    cmd = sub;
  }
  return path;
}
