/**
 * What `npm pack` would put in the tarball, without building or installing it (pack.test.ts does
 * that): the user documentation ships, the lab notebook under docs/experiments (dated write-ups of
 * development runs, for contributors) does not.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { CHECKOUT } from '../helpers/checkout.ts';

const ROOT = CHECKOUT;

test('the package lists docs/*.md and the README, and nothing under docs/experiments', () => {
  // --ignore-scripts: listing the files needs no build (`prepare` would run tsc).
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8' });
  const files = (JSON.parse(out) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path);
  assert.ok(
    files.includes('README.md') && files.includes('docs/configuration.md') && files.includes('docs/advantages.md'),
    files.filter((f) => f.startsWith('docs')).join(', '),
  );
  assert.deepEqual(
    files.filter((f) => f.startsWith('docs/experiments')),
    [],
  );
});
