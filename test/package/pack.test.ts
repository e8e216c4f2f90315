/**
 * The published package, as a user gets it: `npm pack`, installed into an empty project (no tsx, no
 * sources), then the CLI, a plain-JavaScript import and a TypeScript consumer type-checked with tsc.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { installPacked, REPO, type PackedInstall } from '../../scripts/install-packed.ts';

let pkg: PackedInstall;
before(
  () => {
    pkg = installPacked();
  },
  { timeout: 600_000 },
);
after(() => rmSync(dirname(pkg.project), { recursive: true, force: true }));

const installed = () => join(pkg.project, 'node_modules', 'trace-rl');

test('the tarball ships the build, the bin and the data, not the sources or tsx', () => {
  assert.ok(existsSync(join(installed(), 'dist', 'index.js')));
  assert.ok(existsSync(join(installed(), 'dist', 'index.d.ts')));
  assert.ok(existsSync(join(installed(), 'dist', 'index.js.map')));
  assert.ok(existsSync(join(installed(), 'data', 'bamboogle.jsonl')));
  // The math code tool's sandbox script is JavaScript beside the sources, not compiled: the build copies it.
  assert.ok(existsSync(join(installed(), 'dist', 'env', 'math', 'sandbox', 'pyodide-sandbox.mjs')));
  assert.ok(!existsSync(join(installed(), 'src')), 'src/ must not be shipped');
  assert.ok(!existsSync(join(installed(), 'test')), 'test/ must not be shipped');
  assert.ok(!existsSync(join(pkg.project, 'node_modules', 'tsx')), 'tsx is a development dependency only');
});

test('the installed CLI runs from dist/: --version, solve roots, score', () => {
  const version = JSON.parse(execFileSync('node', ['-p', 'JSON.stringify(require("./package.json").version)'], { cwd: REPO, encoding: 'utf8' })) as string;
  assert.equal(execFileSync(pkg.bin, ['--version'], { encoding: 'utf8' }).trim(), version);
  const solved = execFileSync(pkg.bin, ['solve', 'roots'], { input: '{"v":[0.1,0.5,0.9],"budget":8,"min":2,"max":64}', encoding: 'utf8' });
  assert.deepEqual(
    JSON.parse(solved).m.reduce((a: number, b: number) => a + b, 0),
    8,
  );
  const scored = execFileSync(pkg.bin, ['score'], { input: '{"prediction":"Paris","gold":"paris"}\n', encoding: 'utf8' });
  assert.equal(JSON.parse(scored).em, 1);
  const bad = spawnSync(pkg.bin, ['solve', 'roots'], { input: 'not json', encoding: 'utf8' });
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /^trace-rl: stdin is not valid JSON/);
});

test('plain JavaScript imports the library', () => {
  writeFileSync(
    join(pkg.project, 'use.mjs'),
    `import { allocate, advantage } from 'trace-rl';
const { m } = allocate.solveRoots({ v: [0.1, 0.5, 0.9], budget: 8, min: 2, max: 64 });
const estimator = advantage.createEstimator('grpo');
console.log(JSON.stringify({ total: m.reduce((a, b) => a + b, 0), name: estimator.name }));
`,
  );
  const out = JSON.parse(execFileSync('node', ['use.mjs'], { cwd: pkg.project, encoding: 'utf8' }));
  assert.deepEqual(out, { total: 8, name: 'grpo' });
});

test('a TypeScript consumer type-checks against the shipped .d.ts (and a wrong use does not)', () => {
  // One tsc run (the package's declarations loaded once) over a right use and a wrong one: every error
  // is in the wrong file, and it is there.
  writeFileSync(
    join(pkg.project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        module: 'nodenext',
        moduleResolution: 'nodenext',
        target: 'es2022',
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        types: ['node'],
        typeRoots: [join(REPO, 'node_modules', '@types')],
      },
      files: ['use.ts', 'wrong.ts'],
    }),
  );
  const tsc = join(REPO, 'node_modules', 'typescript', 'bin', 'tsc');
  const good = `import { allocate } from 'trace-rl';\nconst m: number[] = allocate.solveRoots({ v: [0.5], budget: 2, min: 2, max: 4 }).m;\nconsole.log(m);\n`;
  writeFileSync(join(pkg.project, 'use.ts'), good);
  writeFileSync(join(pkg.project, 'wrong.ts'), good.replace('m: number[]', 'm: string'));
  const r = spawnSync('node', [tsc, '-p', '.'], { cwd: pkg.project, encoding: 'utf8' });
  const errors = r.stdout.split('\n').filter((l) => /(^|\s)error TS\d+:/.test(l));
  assert.notEqual(r.status, 0, 'assigning number[] to string must fail: the types are real, not any');
  assert.deepEqual(
    errors.filter((l) => !l.startsWith('wrong.ts(')),
    [],
    `the right use type-checks:\n${r.stdout}${r.stderr}`,
  );
  assert.ok(
    errors.some((l) => l.startsWith('wrong.ts(') && / error TS2322:/.test(l)),
    r.stdout + r.stderr,
  );
});

test('the packed file list holds no test or bench files', () => {
  const names = readdirSync(installed());
  assert.ok(!names.includes('bench') && !names.includes('scripts'), names.join(','));
});
