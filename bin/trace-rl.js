#!/usr/bin/env node
// Entry point of the `trace-rl` command. An installed package runs the compiled JavaScript in dist/
// (built by `npm run build`; `npm pack` and `npm ci` run it through `prepare`). A source checkout
// (src/ beside dist/; the package ships no src/) runs the TypeScript sources through tsx instead, so
// development and the tests always run the current code, never a stale build.
import { existsSync } from 'node:fs';

const source = new URL('../src/cli/bin.ts', import.meta.url);
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(source.href);
} else {
  await import(new URL('../dist/cli/bin.js', import.meta.url).href);
}
