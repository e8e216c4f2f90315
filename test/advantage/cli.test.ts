import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildForest, createEstimator } from '../../src/advantage/index.ts';
import { assertClose, E1 } from './fixtures.ts';
import { runCli } from '../helpers/run-cli.ts';

/** Runs the real `trace-rl advantages` with `input` on stdin. */
const cli = (args: string[], input: string) => runCli(['advantages', ...args], input);

// Each spawn costs about a second (node + tsx); the estimators share one output path, so three of them
// (one outcome-only, the two per-turn ones) cover it. The library tests cover all five numerically.
test('advantages: answers {"leaves":[...]} matching the library; trace and trace-local add per-turn values', async () => {
  const input = JSON.stringify({ nodes: E1 });
  const names = ['grpo', 'trace', 'trace-local'];
  const runs = await Promise.all(names.map((n) => cli(['--estimator', n], input)));
  runs.forEach((run, k) => {
    assert.equal(run.code, 0, run.stderr);
    const out = JSON.parse(run.stdout) as { leaves: { id: string; advantage: number; turns?: { id: string; advantage: number }[] }[] };
    const lib = createEstimator(names[k]).estimate(buildForest(E1));
    assert.deepEqual(
      out.leaves.map((l) => l.id),
      ['a1', 'a21', 'a3', 'b1', 'c'],
    );
    out.leaves.forEach((l, j) => assertClose(l.advantage, lib[j].advantage, 1e-12, `${names[k]} ${l.id}`));
    if (names[k] !== 'grpo') {
      assert.deepEqual(
        out.leaves[1].turns!.map((t) => t.id),
        ['a', 'a2', 'a21'],
      );
      assertClose(out.leaves[1].turns![0].advantage, 0.1217161, 1e-5, `${names[k]} a21 turn a`);
      out.leaves[1].turns!.forEach((t, j) => assertClose(t.advantage, lib[1].turns[j], 1e-12, `${names[k]} a21 turn ${t.id}`));
    } else {
      assert.ok(out.leaves.every((l) => l.turns === undefined));
    }
  });
  // The hand-worked grpo value from test/advantage/hand-worked.test.ts reaches stdout unchanged.
  assertClose(JSON.parse(runs[0].stdout).leaves[0].advantage, 0.7302967, 1e-5, 'grpo a1');
});

test('advantages --scale none: unscaled deviations (the hand-worked E1 value)', async () => {
  const run = await cli(['--estimator', 'trace', '--scale', 'none'], JSON.stringify({ nodes: E1 }));
  assert.equal(run.code, 0, run.stderr);
  const a21 = (JSON.parse(run.stdout) as { leaves: { turns: { advantage: number }[] }[] }).leaves[1];
  assertClose(a21.turns[0].advantage, 2 / 3 - 0.6, 1e-12, 'trace a21 turn a, unscaled');
});

test('advantages: bad input is one stderr line naming the node and field, non-zero exit, empty stdout', async () => {
  const q = { id: 'q1', parent: null };
  const cases: Array<[string, string, string[], RegExp]> = [
    ['malformed JSON', '{"nodes": [', ['--estimator', 'grpo'], /not valid JSON/],
    ['leaf without reward', JSON.stringify({ nodes: [q, { id: 'a1', parent: 'q1' }] }), ['--estimator', 'grpo'], /id "a1"\)\.reward/],
    ['cycle', JSON.stringify({ nodes: [q, { id: 'a', parent: 'b' }, { id: 'b', parent: 'a' }] }), ['--estimator', 'trace'], /"a".*cycle/],
    ['unknown parent', JSON.stringify({ nodes: [q, { id: 'a1', parent: 'qq', reward: 1 }] }), ['--estimator', 'grpo'], /"a1" has parent "qq"/],
    [
      'duplicate id',
      JSON.stringify({ nodes: [q, { id: 'a1', parent: 'q1', reward: 1 }, { id: 'a1', parent: 'q1', reward: 0 }] }),
      ['--estimator', 'grpo'],
      /"a1" appears twice/,
    ],
    ['negative length', JSON.stringify({ nodes: [q, { id: 'a1', parent: 'q1', reward: 1, length: -1 }] }), ['--estimator', 'treepo'], /id "a1"\)\.length/],
    [
      'reward not a number',
      JSON.stringify({ nodes: [q, { id: 'a1', parent: 'q1', reward: 'yes' }] }),
      ['--estimator', 'grpo'],
      /id "a1"\)\.reward: expected a finite number/,
    ],
    ['unknown estimator', JSON.stringify({ nodes: [q] }), ['--estimator', 'ppo'], /--estimator: unknown advantage estimator "ppo"/],
    ['unknown scale', JSON.stringify({ nodes: [q] }), ['--estimator', 'grpo', '--scale', 'mad'], /--scale: "mad" is not one of std, none/],
    ['treepo unscaled', JSON.stringify({ nodes: [q] }), ['--estimator', 'treepo', '--scale', 'none'], /--scale: .*treepo whitens/],
  ];
  const runs = await Promise.all(cases.map(([, input, args]) => cli(args, input)));
  runs.forEach((run, k) => {
    const [what, , , pattern] = cases[k];
    assert.notEqual(run.code, 0, `${what}: exit code`);
    assert.equal(run.stdout, '', `${what}: stdout must be empty`);
    assert.equal(run.stderr.trimEnd().split('\n').length, 1, `${what}: one line, got ${JSON.stringify(run.stderr)}`);
    assert.match(run.stderr, pattern, what);
  });
});
