// The warm starts that are no longer tracked come back byte for byte with one command, and every
// checkpoint a bench script or a user document names is either tracked or restorable by it.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'node:test';

const ROOT = resolve(import.meta.dirname, '../..');
const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
const shallow = (() => {
  try {
    return git('rev-parse', '--is-shallow-repository') === 'true';
  } catch {
    return true;
  }
})();
const restorable = () =>
  execFileSync('bash', ['bench/tinylm/restore.sh', '--list'], { cwd: ROOT, encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((l) => l.split(' ')[0]!);

test(
  'restore.sh writes each listed checkpoint with its recorded SHA-256, and refuses an unknown name',
  { skip: shallow && 'a shallow clone lacks the commits' },
  () => {
    const out = mkdtempSync(join(tmpdir(), 'trace-restore-'));
    try {
      const names = restorable();
      assert.ok(names.length >= 2, names.join(', '));
      for (const name of names) {
        const printed = execFileSync('bash', ['bench/tinylm/restore.sh', name, out], { cwd: ROOT, encoding: 'utf8' }).trim();
        assert.equal(printed, join(out, `${name}.gguf`));
        assert.equal(readFileSync(printed).subarray(0, 4).toString('latin1'), 'GGUF');
      }
      assert.deepEqual(readdirSync(out).sort(), names.map((n) => `${n}.gguf`).sort(), 'no temporary file left behind');
      const bad = spawnSync('bash', ['bench/tinylm/restore.sh', 'warm-start-nope', out], { cwd: ROOT, encoding: 'utf8' });
      assert.equal(bad.status, 2);
      assert.match(bad.stderr, /^usage: /);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  },
);

test('every bench/tinylm/*.gguf that bench code or a user document names is tracked or restorable', () => {
  const files = git('ls-files', 'bench', 'docs', 'README.md', 'BENCHMARKS.md')
    .split('\n')
    .filter((f) => /\.(ts|md)$/.test(f) && !f.startsWith('docs/experiments/'));
  const named = new Set(files.flatMap((f) => [...readFileSync(join(ROOT, f), 'utf8').matchAll(/bench\/tinylm\/([\w.-]+)\.gguf/g)].map((m) => m[1]!)));
  assert.ok(named.has('warm-start'), [...named].join(', '));
  const tracked = new Set(
    git('ls-files', 'bench/tinylm')
      .split('\n')
      .filter((f) => f.endsWith('.gguf'))
      .map((f) => f.slice('bench/tinylm/'.length, -'.gguf'.length)),
  );
  const back = new Set(restorable());
  // Names a command writes (--out …) are outputs, not inputs; a document marks them by building them.
  const built = new Set(files.flatMap((f) => [...readFileSync(join(ROOT, f), 'utf8').matchAll(/--out bench\/tinylm\/([\w.-]+)\.gguf/g)].map((m) => m[1]!)));
  const missing = [...named].filter((n) => !tracked.has(n) && !back.has(n) && !built.has(n));
  assert.deepEqual(missing, []);
  for (const n of tracked) assert.ok(existsSync(join(ROOT, 'bench/tinylm', `${n}.gguf`)), n);
});
