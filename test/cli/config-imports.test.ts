/**
 * `trace-rl config` (and every command that parses a configuration) loads the settings of every
 * environment, policy and predictor kind, never their code: each kind imports its code in its build.
 * Read from the sources: the modules src/cli/commands/config.ts reaches through the imports that run
 * when it loads (static ones; not `import type`, not `import('…')`). The math kind's grader brought
 * @cortex-js/compute-engine this way, the world and QA kinds minisearch, the remote kinds hono.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { CHECKOUT } from '../helpers/checkout.ts';

const SRC = resolve(CHECKOUT, 'src');

/** What a module's loading imports: its relative modules (as paths under src/) and its packages. */
function loadTimeImports(file: string): { modules: string[]; packages: string[] } {
  const text = readFileSync(resolve(SRC, file), 'utf8');
  const specifiers = [
    // import … from '…' / export … from '…', unless the whole statement is a type import or export.
    ...[...text.matchAll(/^(?:import|export)(?!\s+type\b)[^;]*?\bfrom\s+'([^']+)'/gm)].map((m) => m[1]!),
    // import '…' (for its effect).
    ...[...text.matchAll(/^import\s+'([^']+)'/gm)].map((m) => m[1]!),
  ];
  return {
    modules: specifiers.filter((s) => s.startsWith('.')).map((s) => relative(SRC, resolve(dirname(resolve(SRC, file)), s))),
    packages: specifiers
      .filter((s) => !s.startsWith('.') && !s.startsWith('node:'))
      .map((s) =>
        s
          .split('/')
          .slice(0, s.startsWith('@') ? 2 : 1)
          .join('/'),
      ),
  };
}

/** Every module and package that loading `from` loads. */
function loadedBy(from: string): { modules: Set<string>; packages: Set<string> } {
  const modules = new Set([from]);
  const packages = new Set<string>();
  const stack = [from];
  while (stack.length > 0) {
    const next = loadTimeImports(stack.pop()!);
    for (const p of next.packages) packages.add(p);
    for (const m of next.modules) if (!modules.has(m)) stack.push((modules.add(m), m));
  }
  return { modules, packages };
}

/** The modules a file imports with `import('…')`: for the kinds' entries, the code their builds load. */
function dynamicImports(file: string): string[] {
  const text = readFileSync(resolve(SRC, file), 'utf8');
  return [...text.matchAll(/import\(\s*'(\.[^']+)'\s*\)/g)].map((m) => relative(SRC, resolve(dirname(resolve(SRC, file)), m[1]!)));
}

test('loadTimeImports reads value imports and effects, and skips type imports and import()', () => {
  const config = loadTimeImports('train/config.ts');
  assert.ok(config.packages.includes('zod'));
  assert.ok(config.modules.includes('env/registry.ts') && config.modules.includes('tinylm/policy-kind.ts'), config.modules.join(', '));
  const world = loadTimeImports('env/world/kind.ts');
  assert.ok(!world.modules.includes('env/types.ts'), 'a type import is not loaded');
  assert.ok(!world.modules.includes('env/world/world-env.ts'), 'import() is not loaded with the module');
  assert.deepEqual(dynamicImports('env/world/kind.ts'), ['env/world/world-env.ts']);
});

test('trace-rl config loads no package but zod, yaml and commander', () => {
  const { modules, packages } = loadedBy('cli/commands/config.ts');
  assert.ok(modules.has('env/registry.ts') && modules.has('policy/registry.ts') && modules.has('predict/registry.ts'));
  assert.deepEqual([...packages].sort(), ['commander', 'yaml', 'zod']);
});

test("trace-rl config loads none of the code the environment, policy and predictor kinds' builds load", () => {
  const { modules } = loadedBy('cli/commands/config.ts');
  const entries = [...modules].filter((m) => /^env\/.*kind\.ts$|^(policy|predict)\/registry\.ts$|^tinylm\/policy-kind\.ts$/.test(m));
  assert.ok(entries.length >= 10, `found the kinds' entries ${entries.join(', ')}`);
  const built = entries.flatMap(dynamicImports);
  assert.ok(built.includes('env/math/math-env.ts') && built.includes('env/remote/setup.ts'), built.join(', '));
  assert.deepEqual(
    built.filter((m) => modules.has(m)),
    [],
  );
});
