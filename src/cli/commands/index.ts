import type { Command } from 'commander';

/** Every subcommand registers itself on the program; one line per command module. */
export const commands: Array<(program: Command) => void> = [];
