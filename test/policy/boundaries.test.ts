/**
 * Where policies live and how they reach environments, read from the sources: a policy under src/env
 * made env → policy the one back-arrow between the two families (issue 32), and a policy importing an
 * environment folder's internal files breaks when that folder reorganises behind its index; and no
 * environment imports a policy module, types included.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { CHECKOUT } from '../helpers/checkout.ts';

// The checkout's own sources: under .test-build/ (npm test) a source is a link, which a directory
// listing does not call a file, and these checks found nothing to check there.
const SRC = resolve(CHECKOUT, 'src');

function sources(dir: string): string[] {
  const files = readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => join(e.parentPath, e.name));
  assert.ok(files.length > 10, `${files.length} sources under ${dir}`);
  return files;
}

/** Relative import specifiers of a file (static `from '…'` and dynamic `import('…')`), resolved under src/. */
function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:from|import\()\s*'(\.[^']+)'/g)].map((m) => relative(SRC, resolve(dirname(file), m[1]!)));
}

test('no class under src/env implements a policy: policies live in src/policy', () => {
  const offenders = sources(join(SRC, 'env')).filter((f) => /\bimplements\s+(Trainable)?Policy\b/.test(readFileSync(f, 'utf8')));
  assert.deepEqual(
    offenders.map((f) => relative(SRC, f)),
    [],
  );
});

test('src/policy reaches an environment folder (env/world, env/math, env/bfcl, …) only through its index.ts', () => {
  const families = readdirSync(join(SRC, 'env'), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => `env/${e.name}/`);
  assert.ok(families.includes('env/math/') && families.includes('env/bfcl/'));
  const offenders = sources(join(SRC, 'policy')).flatMap((f) =>
    imports(f)
      .filter((target) => families.some((fam) => target.startsWith(fam) && target !== `${fam}index.ts`))
      .map((target) => `${relative(SRC, f)} → ${target}`),
  );
  assert.deepEqual(offenders, []);
});

test('no file under src/env imports src/policy (not even its types): environments do not depend on policies', () => {
  const offenders = sources(join(SRC, 'env')).flatMap((f) =>
    imports(f)
      .filter((target) => target.startsWith('policy/'))
      .map((target) => `${relative(SRC, f)} → ${target}`),
  );
  assert.deepEqual(offenders, []);
});
