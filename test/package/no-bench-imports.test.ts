/**
 * The library's tests import nothing from bench/: bench code is research tooling that changes with
 * each experiment, so a test resting on it can break (or pass) for reasons of the bench's. A bench's
 * own checks live beside it (bench/<area>/*.test.ts, run by scripts/test.sh too), and bench may use
 * the tests' helpers (stand-ins, harnesses).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { CHECKOUT } from '../helpers/checkout.ts';

const ROOT = CHECKOUT;

test('no file under test/ imports a module under bench/ (static or dynamic import)', () => {
  const files = readdirSync(join(ROOT, 'test'), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => join(e.parentPath, e.name));
  assert.ok(files.length > 100, `found ${files.length} files`);
  const offenders = files.flatMap((f) =>
    [...readFileSync(f, 'utf8').matchAll(/(?:from|import\()\s*'(\.[^']+)'/g)]
      .map((m) => relative(ROOT, resolve(dirname(f), m[1]!)))
      .filter((target) => target.startsWith('bench/'))
      .map((target) => `${relative(ROOT, f)} → ${target}`),
  );
  assert.deepEqual(offenders, []);
});
