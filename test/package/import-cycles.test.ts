/**
 * No two modules under src/ import each other, directly or through others (type imports included):
 * a circle means neither module can be read, tested or moved without the other, and under ESM it can
 * leave a binding undefined while the circle is still loading. A value both sides need goes into a
 * module of its own below them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { CHECKOUT } from '../helpers/checkout.ts';

const SRC = resolve(CHECKOUT, 'src');

/** Each file's relative imports (static `from '…'`, side-effect `import '…'` and dynamic `import('…')`), as paths under src/. */
function importGraph(): Map<string, string[]> {
  const files = readdirSync(SRC, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => join(e.parentPath, e.name));
  return new Map(
    files.map((f) => [
      relative(SRC, f),
      [...readFileSync(f, 'utf8').matchAll(/(?:from|import\(?)\s*'(\.[^']+)'/g)].map((m) => relative(SRC, resolve(dirname(f), m[1]!))),
    ]),
  );
}

/** The circles of a graph: its strongly connected components of more than one node, or a self-import (Tarjan). */
function circles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

test('circles() finds a two-module circle, a longer one and a self-import, and nothing in a chain', () => {
  const graph = new Map([
    ['a.ts', ['b.ts']],
    ['b.ts', ['a.ts', 'c.ts']],
    ['c.ts', ['d.ts']],
    ['d.ts', ['e.ts']],
    ['e.ts', ['c.ts']],
    ['f.ts', ['f.ts']],
    ['g.ts', ['a.ts', 'outside.ts']],
  ]);
  assert.deepEqual(circles(graph).sort(), [['a.ts', 'b.ts'], ['c.ts', 'd.ts', 'e.ts'], ['f.ts']]);
  assert.deepEqual(
    circles(
      new Map([
        ['x.ts', ['y.ts']],
        ['y.ts', []],
      ]),
    ),
    [],
  );
});

test('no import circle among the modules under src/', () => {
  const graph = importGraph();
  assert.ok(graph.size > 100, `found ${graph.size} files`);
  assert.deepEqual(circles(graph), []);
});

test('nothing under src/policy imports src/tinylm: the tiny LM is a plugin that registers its policy kind itself', () => {
  const arrows = [...importGraph()]
    .filter(([file]) => file.startsWith('policy/'))
    .flatMap(([file, imports]) => imports.filter((i) => i.startsWith('tinylm/')).map((i) => `${file} → ${i}`));
  assert.deepEqual(arrows, []);
});

/** Every file `from` reaches through its imports (itself excluded). */
function reach(graph: ReadonlyMap<string, readonly string[]>, from: readonly string[]): Set<string> {
  const seen = new Set<string>();
  const stack = [...from];
  while (stack.length > 0) {
    for (const w of graph.get(stack.pop()!) ?? []) if (!seen.has(w)) stack.push((seen.add(w), w));
  }
  return seen;
}

test('export and report read only the store: nothing they import reaches train/, env/ or policy/', () => {
  const graph = importGraph();
  for (const folder of ['export', 'report']) {
    const own = [...graph.keys()].filter((f) => f.startsWith(`${folder}/`));
    assert.ok(own.length > 3, `found ${own.length} files in src/${folder}`);
    const above = [...reach(graph, own)].filter((f) => /^(train|env|policy)\//.test(f)).sort();
    assert.deepEqual(above, [], `src/${folder} reaches ${above.join(', ')}`);
  }
});
