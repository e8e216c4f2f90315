// `trace-rl --version` is answered by bin/trace-rl.js before any command code loads (start-up time);
// its line must stay what the CLI itself (commander, through main) prints for the same flag.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { main } from '../../src/cli/main.ts';

const ROOT = join(import.meta.dirname, '../..');
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

test('bin --version and -V print the package version, the same line main() prints', async () => {
  for (const flag of ['--version', '-V'])
    assert.equal(execFileSync(process.execPath, [join(ROOT, 'bin/trace-rl.js'), flag], { encoding: 'utf8' }), `${VERSION}\n`);
  const written: string[] = [];
  const write = process.stdout.write;
  process.stdout.write = ((chunk: string) => (written.push(String(chunk)), true)) as typeof process.stdout.write;
  try {
    await main(['node', 'trace-rl', '--version']);
  } finally {
    process.stdout.write = write;
  }
  assert.equal(written.join(''), `${VERSION}\n`);
});
