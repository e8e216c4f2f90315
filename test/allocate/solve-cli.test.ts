import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mixedChance } from '../../src/allocate/solvers/mixed-value.ts';
import { bruteWeighted } from './brute-force.ts';
import { runCli } from '../helpers/run-cli.ts';

test('solve roots: the documented contract, optimal against brute force', async () => {
  const v = [0.5, 0.1, 0.9, 0.3, 0];
  const r = await runCli(['solve', 'roots'], JSON.stringify({ v, budget: 11, min: 2, max: 4 }));
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout) as { m: number[]; objective: number };
  assert.deepEqual(Object.keys(out), ['m', 'objective']);
  assert.equal(
    out.m.reduce((a, b) => a + b, 0),
    11,
  );
  const best = bruteWeighted(
    v.map((x) => ({ v: x, w: 1 })),
    11,
    2,
    4,
  )!;
  assert.ok(Math.abs(out.objective - best) < 1e-12);
  assert.ok(Math.abs(out.m.reduce((s, m, i) => s + mixedChance(v[i], m), 0) - best) < 1e-12);
});

test('solve prefixes and solve knapsack: the documented contracts', async () => {
  const p = await runCli(
    ['solve', 'prefixes'],
    JSON.stringify({
      budget: 4,
      prefixes: [
        { id: 'a', q: 0.3, r: 1 },
        { id: 'b', q: 0.9, r: 1 },
      ],
    }),
  );
  assert.equal(p.code, 0, p.stderr);
  const po = JSON.parse(p.stdout);
  assert.deepEqual(po.k, { a: 2, b: 2 });
  assert.ok(Math.abs(po.objective - (1 - 0.3 ** 2 + 1 - 0.9 ** 2)) < 1e-12);
  const k = await runCli(['solve', 'knapsack'], JSON.stringify({ p: [0.5, 0.1, 0.9, 0.3], budget: 9, min: 2, max: 5 }));
  assert.equal(k.code, 0, k.stderr);
  const ko = JSON.parse(k.stdout);
  const best = bruteWeighted(
    [0.5, 0.1, 0.9, 0.3].map((x) => ({ v: x, w: x * (1 - x) ** 2 })),
    9,
    2,
    5,
  )!;
  assert.ok(Math.abs(ko.objective - best) < 1e-12);
});

test('bad input: one stderr line naming the field, non-zero exit, nothing on stdout', async () => {
  const cases: Array<[string[], string, RegExp]> = [
    [['solve', 'roots'], '{"v":[0.5,1.5],"budget":4}', /input\.v\.1/],
    [['solve', 'roots'], '{"v":[0.5,0.5],"budget":1,"min":2,"max":4}', /input\.budget: 1 cannot be spent exactly.*0 or 2/],
    [['solve', 'prefixes'], '{"budget":2,"prefixes":[{"id":"a","q":0.5}]}', /input\.prefixes\.0\.r/],
    [['solve', 'knapsack'], '{"p":[0.5', /not valid JSON/],
  ];
  const results = await Promise.all(cases.map(([args, stdin]) => runCli(args, stdin)));
  for (const [k, [, stdin, pattern]] of cases.entries()) {
    const r = results[k];
    assert.notEqual(r.code, 0, `${stdin} should fail`);
    assert.equal(r.stdout, '', `${stdin}: nothing on stdout`);
    assert.equal(r.stderr.trim().split('\n').length, 1, `${stdin}: one line, got ${r.stderr}`);
    assert.match(r.stderr, pattern);
  }
});
