/**
 * The command table (src/cli/command-table.ts) answers help and refusals as the real commands do: a
 * program built from the table prints the same help for every command and refuses the same arguments
 * with the same line, so a declaration the table loses (an option, a default, a help text, an argument)
 * fails here. The built CLI's own table (dist/, written by scripts/build.sh) must equal the one made from
 * the commands now, and answering `train --help` from it must load no command module, no zod and no
 * configuration schema: that is what makes it fast.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { describeCommands, type CommandEntry } from '../../src/cli/command-table.ts';
import { bareOutputs } from '../../src/cli/commands/index.ts';
import { buildProgram } from '../../src/cli/main.ts';
import { runCli } from '../reliability/cli-in-process.ts';

const real = await buildProgram();
const table = describeCommands(real, await bareOutputs());

/** Every command path: ['train'], ['retriever'], ['retriever', 'serve'], … */
function paths(cmd: Command, prefix: string[] = []): string[][] {
  return cmd.commands.flatMap((c) => [[...prefix, c.name()], ...paths(c, [...prefix, c.name()])]);
}
const ALL = paths(real);

async function sameAnswer(args: string[], stdin = ''): Promise<{ code: number; stdout: string; stderr: string }> {
  const fromModules = await runCli(args, stdin);
  const fromTable = await runCli(args, stdin, table);
  assert.deepEqual(fromTable, fromModules, `trace-rl ${args.join(' ')}: the table's answer differs from the commands'`);
  return fromTable;
}

test('the table is plain JSON: writing and reading it back loses nothing', () => {
  assert.deepEqual(JSON.parse(JSON.stringify(table)) as CommandEntry[], table);
  assert.ok(ALL.length >= 18, `${ALL.length} command paths`);
});

test("every command's --help from the table is the command's own, and lists each of its options", async () => {
  for (const args of [['--help'], ['help'], []]) await sameAnswer(args);
  for (const path of ALL) {
    const r = await sameAnswer([...path, '--help']);
    assert.equal(r.code, 0, `${path.join(' ')} --help: ${r.stderr}`);
    const cmd = path.reduce<Command>((c, name) => c.commands.find((s) => s.name() === name)!, real);
    for (const o of cmd.options) if (!o.hidden) assert.ok(r.stdout.includes(o.flags), `${path.join(' ')} --help lists ${o.flags}`);
    await sameAnswer(['help', ...path]);
  }
});

test('refusals from the table are the commands’ own lines: an unknown flag, a near miss, a missing argument or option, an unknown command', async () => {
  for (const path of ALL) {
    const r = await sameAnswer([...path, '--no-such-flag']);
    assert.equal(r.code, 2, `${path.join(' ')} --no-such-flag`);
    // One line; a command with a required option names that one first.
    assert.match(r.stderr, /^trace-rl [^\n]*: (unknown option '--no-such-flag'|required option [^\n]*) \(see trace-rl [^\n]* --help\)\n$/);
  }
  assert.match((await sameAnswer(['train', '--budgt', '3'])).stderr, /did you mean --budget\?/);
  assert.match((await sameAnswer(['export'])).stderr, /required option '--format <form>' not specified/);
  assert.match((await sameAnswer(['report'])).stderr, /missing required argument 'run_dir'/);
  assert.match((await sameAnswer(['trian'])).stderr, /unknown command 'trian'; did you mean train\?/);
  assert.match((await sameAnswer(['--version'])).stdout, /^\d+\.\d+\.\d+\n$/);
});

test('a command the table accepts then runs for real', async () => {
  const r = await sameAnswer(['score'], '{"prediction":"Paris","gold":"paris"}\n');
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /"em":1/);
  assert.match((await sameAnswer(['config', '--steps', '3'])).stdout, /^steps: 3$/m);
  // The bare config is the table's own answer (the defaults, written at build); any option runs the command.
  assert.ok(table.find((e) => e.name === 'config')?.bareOutput?.includes('steps: 30\n'));
  assert.match((await sameAnswer(['config'])).stdout, /^steps: 30$/m);
  assert.match((await sameAnswer(['config', '--steps', '30'])).stdout, /^steps: 30$/m);
  assert.match((await sameAnswer(['config', '--docs'])).stdout, /^\| `steps` \|/m);
  // A value the command checks itself (not commander) is refused by the command, after the table.
  assert.match((await sameAnswer(['config', '--steps', 'x'])).stderr, /--steps/);
});

const DIST = fileURLToPath(new URL('../../dist/cli/', import.meta.url));
const BIN = fileURLToPath(new URL('../../bin/trace-rl.js', import.meta.url));
const built = existsSync(`${DIST}command-table.json`) && process.env.TRACE_RL_RUN_DIST === '1';
const why = 'needs a fresh dist/ (scripts/test.sh builds it and sets TRACE_RL_RUN_DIST=1)';

test("the built CLI's table is the commands' table", { skip: built ? false : why }, () => {
  assert.deepEqual(JSON.parse(readFileSync(`${DIST}command-table.json`, 'utf8')), table, 'dist/ is stale: run bash scripts/build.sh');
});

test('the built CLI answers help, refusals and the bare config without loading a command module or the schema', { skip: built ? false : why }, () => {
  // A loader hook that prints every module URL the process loads.
  const hook = `data:text/javascript,${encodeURIComponent('export async function load(u, c, next) { process._rawDebug("LOADED " + u); return next(u, c); }')}`;
  const register = `data:text/javascript,${encodeURIComponent(`import { register } from 'node:module'; register(${JSON.stringify(hook)});`)}`;
  for (const args of [['--help'], ['train', '--help'], ['config', '--help'], ['compare', '--budget-nope'], ['config']]) {
    const r = spawnSync(process.execPath, ['--import', register, BIN, ...args], { encoding: 'utf8', env: { ...process.env, TRACE_RL_RUN_DIST: '1' } });
    const loaded = [...r.stderr.matchAll(/^LOADED (.*)$/gm)].map((m) => m[1]!);
    assert.ok(
      loaded.some((u) => u.endsWith('/dist/cli/main.js')),
      `${args.join(' ')}: the hook saw the CLI load`,
    );
    const heavy = loaded.filter((u) => /\/dist\/cli\/commands\/(?!index\.js)|\/node_modules\/zod\/|\/dist\/train\//.test(u));
    assert.deepEqual(heavy, [], `trace-rl ${args.join(' ')} loaded these`);
  }
});
