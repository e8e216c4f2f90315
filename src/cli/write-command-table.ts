/**
 * Writes the command table (command-table.ts) of every command to the file named on the command line:
 * scripts/build.sh runs the compiled copy, `node dist/cli/write-command-table.js dist/cli/command-table.json`,
 * so the table beside the compiled CLI always comes from the commands compiled with it (their bare
 * outputs too: `config`'s defaults).
 */
import { writeFileSync } from 'node:fs';
import { describeCommands } from './command-table.ts';
import { bareOutputs } from './commands/index.ts';
import { buildProgram } from './main.ts';

const out = process.argv[2];
if (out === undefined) throw new Error('usage: node dist/cli/write-command-table.js <file.json>');
writeFileSync(out, JSON.stringify(describeCommands(await buildProgram(), await bareOutputs())));
