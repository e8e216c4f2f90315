import { Argument, Command, Option } from 'commander';
import type { EventEmitter } from 'node:events';
import { fileURLToPath } from 'node:url';

/**
 * Every subcommand's declaration as plain data: name, description, arguments, options, help text and
 * subcommands, without the code that runs it. The build writes it beside the compiled CLI
 * (scripts/build.sh, write-command-table.ts) from the real command modules, so the installed CLI
 * answers `--help`, a command's `--help`, a refused flag and a command's fixed bare output (`config`
 * without options: the defaults) from this table alone: a command module loads its whole graph (zod schemas, SQLite, jax-js, vega), which costs a second where the answer
 * needs none of it. The table is made from the real commands at every build, so it cannot drift from
 * them; test/cli/command-table.test.ts checks that a program built from it prints and refuses what the
 * real one does.
 */
export interface CommandEntry {
  name: string;
  description: string;
  summary?: string;
  aliases: string[];
  arguments: ArgumentEntry[];
  options: OptionEntry[];
  /** Text added with addHelpText, by position (before, after, …). */
  helpText: Array<[HelpPosition, string]>;
  /** Whether the command runs something itself (a command with subcommands only shows its help). */
  runs: boolean;
  /** What the command prints when given no argument and no option (CommandModule.bareOutput), when it declares it. */
  bareOutput?: string;
  commands: CommandEntry[];
}

export interface OptionEntry {
  flags: string;
  description: string;
  defaultValue?: Value;
  defaultValueDescription?: string;
  mandatory?: true;
  hidden?: true;
  choices?: string[];
  presetArg?: Value;
  envVar?: string;
}

export interface ArgumentEntry {
  /** As declared: `<run-dir>`, `[file]`, `<run_dir...>`. */
  declaration: string;
  description: string;
  defaultValue?: Value;
  defaultValueDescription?: string;
  choices?: string[];
}

type Value = string | number | boolean | null | Value[];
type HelpPosition = 'beforeAll' | 'before' | 'after' | 'afterAll';
const HELP_POSITIONS: HelpPosition[] = ['beforeAll', 'before', 'after', 'afterAll'];

/**
 * The package's folder as this module sees it (dist/cli/ or src/cli/, two levels down). Defaults such as
 * `--data`'s bundled BFCL folder are absolute paths into it; the table holds them as PACKAGE_TOKEN so
 * that a table built in one place answers with the folder the CLI runs from (a moved or copied package).
 */
const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PACKAGE_TOKEN = '<trace-rl package>/';

/** Every string of `value` with `from` replaced by `to` (through JSON, whose escaping both sides share). */
function replacedIn<T>(value: T, from: string, to: string): T {
  const escaped = (s: string) => JSON.stringify(s).slice(1, -1);
  return JSON.parse(JSON.stringify(value).split(escaped(from)).join(escaped(to))) as T;
}

/**
 * The table of a program's subcommands, with the bare outputs of those that declare one (by name). A
 * declaration the table cannot carry (a function as a default) is an error, at build time.
 */
export function describeCommands(program: Command, bareOutputs: Readonly<Record<string, string>> = {}): CommandEntry[] {
  return replacedIn(
    program.commands.map((c) => ({
      ...describeCommand(c, `trace-rl ${c.name()}`),
      ...(bareOutputs[c.name()] !== undefined ? { bareOutput: bareOutputs[c.name()] } : {}),
    })),
    PACKAGE_ROOT,
    PACKAGE_TOKEN,
  );
}

function describeCommand(cmd: Command, where: string): CommandEntry {
  return {
    name: cmd.name(),
    description: cmd.description(),
    ...(cmd.summary() ? { summary: cmd.summary() } : {}),
    aliases: cmd.aliases(),
    arguments: cmd.registeredArguments.map((a) => ({
      declaration: `${a.required ? '<' : '['}${a.name()}${a.variadic ? '...' : ''}${a.required ? '>' : ']'}`,
      description: a.description,
      ...defaults(a, `${where} ${a.name()}`),
    })),
    options: cmd.options.map((o) => ({
      flags: o.flags,
      description: o.description,
      ...defaults(o, `${where} ${o.flags}`),
      ...(o.mandatory ? { mandatory: true as const } : {}),
      ...(o.hidden ? { hidden: true as const } : {}),
      ...(o.presetArg !== undefined ? { presetArg: plain(o.presetArg, `${where} ${o.flags}`) } : {}),
      ...(o.envVar !== undefined ? { envVar: o.envVar } : {}),
    })),
    helpText: HELP_POSITIONS.flatMap((position) =>
      // A Command is an EventEmitter (commander's types leave that out); addHelpText adds a listener that
      // writes its text (and a newline) through the context it is given.
      (cmd as unknown as EventEmitter).listeners(`${position}Help`).map((listener): [HelpPosition, string] => {
        let text = '';
        listener({ error: false, command: cmd, write: (s: string) => (text += s) });
        return [position, text.replace(/\n$/, '')];
      }),
    ),
    runs: (cmd as unknown as { _actionHandler: unknown })._actionHandler !== null,
    commands: cmd.commands.map((c) => describeCommand(c, `${where} ${c.name()}`)),
  };
}

function defaults(x: Option | Argument, where: string): Pick<OptionEntry, 'defaultValue' | 'defaultValueDescription' | 'choices'> {
  return {
    ...(x.defaultValue !== undefined ? { defaultValue: plain(x.defaultValue, where) } : {}),
    ...(x.defaultValueDescription !== undefined ? { defaultValueDescription: x.defaultValueDescription } : {}),
    ...(x.argChoices !== undefined ? { choices: x.argChoices } : {}),
  };
}

/** A value the table can hold as JSON unchanged; anything else (a function, a Map) must stay in the command's code. */
function plain(value: unknown, where: string): Value {
  if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) return value as Value;
  if (Array.isArray(value)) return value.map((v) => plain(v, where));
  throw new Error(`${where}: a default of type ${typeof value} cannot be written to the command table (src/cli/command-table.ts); declare it as plain data`);
}

/**
 * Adds the table's commands to `program` as declarations only: each command that runs something gets
 * `onRun` as its action, called once its arguments and options have parsed. What the table leaves out (an option's own parser, conflicts,
 * implications) is checked when the real command parses the same arguments after it. Subcommands come from `parent.command()`, so they inherit the
 * program's settings (exitOverride, output) as the real ones do.
 */
export function addTableCommands(program: Command, table: readonly CommandEntry[], onRun: () => void): void {
  for (const entry of replacedIn(table, PACKAGE_TOKEN, PACKAGE_ROOT)) addEntry(program, entry, onRun);
}

/** Whether the user gave `option` (on the command line or through its environment variable), not its default. */
function givenOn(cmd: Command, option: Option): boolean {
  const source = cmd.getOptionValueSource(option.attributeName());
  return source === 'cli' || source === 'env';
}

function addEntry(parent: Command, entry: CommandEntry, onRun: () => void): void {
  const cmd = parent.command(entry.name).description(entry.description).aliases(entry.aliases);
  if (entry.summary !== undefined) cmd.summary(entry.summary);
  for (const a of entry.arguments) {
    const argument = new Argument(a.declaration, a.description);
    if (a.defaultValue !== undefined) argument.default(a.defaultValue, a.defaultValueDescription);
    if (a.choices !== undefined) argument.choices(a.choices);
    cmd.addArgument(argument);
  }
  for (const o of entry.options) {
    const option = new Option(o.flags, o.description);
    if (o.defaultValue !== undefined) option.default(o.defaultValue, o.defaultValueDescription);
    else if (o.defaultValueDescription !== undefined) option.defaultValueDescription = o.defaultValueDescription;
    if (o.choices !== undefined) option.choices(o.choices);
    if (o.mandatory) option.makeOptionMandatory();
    if (o.hidden) option.hideHelp();
    if (o.presetArg !== undefined) option.preset(o.presetArg);
    if (o.envVar !== undefined) option.env(o.envVar);
    cmd.addOption(option);
  }
  for (const [position, text] of entry.helpText) cmd.addHelpText(position, text);
  const bare = entry.bareOutput;
  // Given no argument and no option, a command with a bare output is answered here, like its help.
  if (bare !== undefined)
    cmd.action(() => {
      if (cmd.args.length === 0 && cmd.options.every((o) => !givenOn(cmd, o))) process.stdout.write(bare);
      else onRun();
    });
  else if (entry.runs) cmd.action(onRun);
  for (const sub of entry.commands) addEntry(cmd, sub, onRun);
}
