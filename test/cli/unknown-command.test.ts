/**
 * An unknown command is refused as one line naming it, exit 2 — with or without --help, and as
 * `help <name>` (commander alone printed the general help and exited 0 there). The cases run through
 * the CLI's main in this process (a spawned CLI costs 2 s or more to load, for the same code path);
 * one of each kind also runs through the real executable.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runCli as spawnCli } from '../helpers/run-cli.ts';
import { runCli } from '../reliability/cli-in-process.ts';

async function refused(
  args: string[],
  line: string,
  run: (args: string[]) => Promise<{ code: number | null; stdout: string; stderr: string }> = runCli,
): Promise<void> {
  const r = await run(args);
  assert.equal(r.code, 2, `${args.join(' ')}: ${r.stdout.slice(0, 200)}`);
  assert.equal(r.stdout, '', `${args.join(' ')}: nothing on stdout`);
  assert.equal(r.stderr, `${line}\n`);
}

test('an unknown command, with or without --help, says so in one line and exits 2', async () => {
  const line = "trace-rl: unknown command 'nonsense' (see trace-rl --help)";
  await refused(['nonsense', '--help'], line, spawnCli);
  for (const args of [['nonsense'], ['nonsense', '--help'], ['nonsense', '-h'], ['--help', 'nonsense'], ['help', 'nonsense']]) await refused(args, line);
  // commander's suggestion for a near miss stays on the same line.
  await refused(['trian', '--help'], "trace-rl: unknown command 'trian'; did you mean train? (see trace-rl --help)");
});

test('help for the program and for a known command still prints and exits 0', async () => {
  for (const [args, first] of [
    [['--help'], 'Usage: trace-rl [options] [command]'],
    [['help'], 'Usage: trace-rl [options] [command]'],
    [['train', '--help'], 'Usage: trace-rl train [options]'],
    [['help', 'train'], 'Usage: trace-rl train [options]'],
  ] as const) {
    const r = await runCli(args);
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stdout.split('\n')[0], first);
  }
  const real = await spawnCli(['help', 'train']);
  assert.equal(real.code, 0, real.stderr);
  assert.equal(real.stdout.split('\n')[0], 'Usage: trace-rl train [options]');
});
