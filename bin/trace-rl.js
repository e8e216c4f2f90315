#!/usr/bin/env node
// Entry point of the `trace-rl` command. An installed package runs the compiled JavaScript in dist/
// (built by `npm run build`; `npm pack` and `npm ci` run it through `prepare`). A source checkout
// (src/ beside dist/; the package ships no src/) runs the TypeScript sources through tsx instead, so
// development always runs the current code, never a stale build (the tests, see below, build first).
import { existsSync, readFileSync } from 'node:fs';

const args = process.argv.slice(2);
// A reader that closes the pipe early (`trace-rl --help | head`) ends the output, not the program with a
// stack trace: nothing more can be written there anyway.
process.stdout.on('error', (e) => {
  if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw e;
});
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  // A bare version query needs none of the command's code: answered before tsx or the CLI modules load,
  // from the same package.json the CLI reads (commander prints the same line for it).
  process.stdout.write(`${JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version}\n`);
} else {
  const source = new URL('../src/cli/bin.ts', import.meta.url);
  // TRACE_RL_RUN_DIST=1 runs dist/ in a checkout too: scripts/test.sh builds it first, so the tests'
  // hundreds of CLI children run what a user installs and skip tsx's cost (~0.8 CPU-s a process).
  if (existsSync(source) && process.env.TRACE_RL_RUN_DIST !== '1') {
    const { register } = await import('tsx/esm/api');
    register();
    await import(source.href);
  } else {
    await import(new URL('../dist/cli/bin.js', import.meta.url).href);
  }
}
