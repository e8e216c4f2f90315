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

test('compare: an option none of the compared strategies takes, or a bad --trace, is refused before anything runs', async () => {
  const r = await runCli(['compare', ...SIM, '--strategies', 'trace,grpo', '--set', 'strategy.knapsackPrior=2', '--out', join(root, 'bad')]);
  assert.equal(r.code, 2);
  assert.equal(r.stderr, 'trace-rl: strategy.knapsackPrior: none of the compared strategies (trace, grpo) takes this option\n');
  const t = await runCli(['compare', ...SIM, '--trace', 'best', '--out', join(root, 'bad')]);
  assert.equal(t.code, 2);
  assert.match(t.stderr, /--trace: "best" is not one of recommended, paper/);
  assert.equal(existsSync(join(root, 'bad')), false);
});
