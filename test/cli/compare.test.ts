/**
 * `trace-rl compare` runs the trace arm with the recommended options (issue 13's frozen configuration)
 * unless --trace paper; strategy options go to the compared strategies that take them. Real CLI, real
 * child `trace-rl train` runs on the simulator (1 step), real run folders.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { parse } from 'yaml';
import { RECOMMENDED_TRACE_OPTIONS } from '../../src/allocate/index.ts';
import { withEqualTokens } from '../../src/cli/commands/compare.ts';
import { RunStore } from '../../src/store/index.ts';
import { storedTrainConfig } from '../../src/train/config.ts';
import { runCli } from '../reliability/cli-in-process.ts';

const root = mkdtempSync(join(tmpdir(), 'trace-rl-compare-'));
after(() => rmSync(root, { recursive: true, force: true }));
const SIM = ['--env', 'simulator', '--pool', '8', '--budget', '24', '--steps', '1', '--seeds', '1', '--jobs', '2'];
const strategyOf = (dir: string) => parse(readFileSync(join(dir, 'config.yaml'), 'utf8')).strategy;

test('compare: trace runs the recommended options by default, the paper with --trace paper; grpo never gets them', async () => {
  const rec = await runCli(['compare', ...SIM, '--strategies', 'trace,grpo', '--set', 'strategy.continuations=1', '--out', join(root, 'rec')]);
  assert.equal(rec.code, 0, rec.stderr);
  assert.deepEqual(strategyOf(join(root, 'rec', 'trace-s0')), { ...strategyOf(join(root, 'rec', 'trace-s0')), ...RECOMMENDED_TRACE_OPTIONS, continuations: 1 });
  assert.ok(Object.keys(RECOMMENDED_TRACE_OPTIONS).length > 0);
  const grpo = strategyOf(join(root, 'rec', 'grpo-s0'));
  for (const k of [...Object.keys(RECOMMENDED_TRACE_OPTIONS), 'continuations']) assert.equal(grpo[k], undefined, `grpo has no ${k}`);
  const paper = await runCli(['compare', ...SIM, '--strategies', 'trace', '--trace', 'paper', '--out', join(root, 'paper')]);
  assert.equal(paper.code, 0, paper.stderr);
  const s = strategyOf(join(root, 'paper', 'trace-s0'));
  // The paper's trace: none of the options beyond the paper, and the paper's N = 2.
  for (const k of Object.keys(RECOMMENDED_TRACE_OPTIONS).filter((k) => k !== 'continuations')) assert.equal(s[k], undefined, `the paper's trace has no ${k}`);
  assert.equal(s.continuations, 2);
});

test('compare: a folder holding an earlier run goes on only as that run: other settings are refused before anything runs, a new --steps total resumes it', async () => {
  const before = readFileSync(join(root, 'rec', 'trace-s0', 'config.yaml'), 'utf8');
  // The paper's arm in the recommended arm's folder once reported the recommended run's numbers as its own.
  const paper = await runCli(['compare', ...SIM, '--strategies', 'trace', '--trace', 'paper', '--out', join(root, 'rec')]);
  assert.equal(paper.code, 2);
  assert.match(paper.stderr, /^trace-rl: compare: \S+trace-s0 holds a run with other settings \(strategy\.\w+: .+ there, .+ now\); use another --out folder/);
  assert.equal(readFileSync(join(root, 'rec', 'trace-s0', 'config.yaml'), 'utf8'), before);
  // One arm is enough to show the resume (grpo's run is the same without trace's option).
  const longer = await runCli(['compare', ...SIM, '--strategies', 'grpo', '--out', join(root, 'rec'), '--steps', '2']);
  assert.equal(longer.code, 0, longer.stderr);
  for (const [arm, last] of [
    ['grpo-s0', 1],
    ['trace-s0', 0],
  ] as const) {
    const store = RunStore.open(join(root, 'rec', arm), { readonly: true });
    try {
      assert.equal(store.lastStep(), last, arm);
      assert.equal(storedTrainConfig(store).steps, last + 1, arm);
    } finally {
      store.close();
    }
  }
});

test('compare: an option none of the compared strategies takes, or a bad --trace, is refused before anything runs', async () => {
  const r = await runCli(['compare', ...SIM, '--strategies', 'trace,grpo', '--set', 'strategy.knapsackPrior=2', '--out', join(root, 'bad')]);
  assert.equal(r.code, 2);
  assert.equal(r.stderr, 'trace-rl: strategy.knapsackPrior: none of the compared strategies (trace, grpo) takes this option\n');
  const t = await runCli(['compare', ...SIM, '--trace', 'best', '--out', join(root, 'bad')]);
  assert.equal(t.code, 2);
  assert.match(t.stderr, /--trace: "best" is not one of recommended, paper/);
  assert.equal(existsSync(join(root, 'bad')), false);
});

test('compare: with no budget given it runs at equal generated tokens (math-world 6,000 a step); dapo runs whole groups and says so', async () => {
  const r = await runCli([
    'compare',
    '--env',
    'math-world',
    '--set',
    'env.math.problems=200',
    '--set',
    'eval.questions=20',
    '--pool',
    '16',
    '--steps',
    '1',
    '--seeds',
    '1',
    '--jobs',
    '2',
    '--strategies',
    'grpo,dapo',
    '--out',
    join(root, 'tokens'),
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(strategyOf(join(root, 'tokens', 'grpo-s0')), { name: 'grpo', unit: 'tokens', budget: 6_000 });
  const dapo = strategyOf(join(root, 'tokens', 'dapo-s0'));
  assert.equal(dapo.unit, 'trajectories');
  assert.equal(dapo.budget, 192);
  assert.match(r.stdout, /dapo counts whole groups: it runs at 192 trajectories a step/);
  // A budget on the command line is the user's: no token default on top of it.
  const given = await runCli(['compare', ...SIM, '--strategies', 'grpo', '--out', join(root, 'given')]);
  assert.equal(given.code, 0, given.stderr);
  assert.deepEqual(strategyOf(join(root, 'given', 'grpo-s0')), { name: 'grpo', unit: 'trajectories', budget: 24 });
});

test('compare: the token default follows the environment (the world, its late profile); environments with no measured figure keep trajectories', () => {
  const strategy = (raw: Record<string, unknown>) => withEqualTokens(raw).strategy;
  assert.deepEqual(strategy({}), { unit: 'tokens', budget: 11_500 });
  assert.deepEqual(strategy({ env: { world: { profile: 'late' } } }), { unit: 'tokens', budget: 15_000 });
  assert.equal(strategy({ env: { kind: 'simulator' } }), undefined);
  assert.deepEqual(strategy({ strategy: { unit: 'turns' } }), { unit: 'turns' });
});
