/**
 * The evaluation harness without a server: interval formulas against hand-worked values, the --json
 * shape, every registered environment kind through the real CLI, a folder refusing other settings, a
 * partial last line (a killed writer) cut off on reopen, and per-question determinism.
 */
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { ANSWER_METRICS } from '../../src/env/metrics.ts';
import { EvalStore, TRAJECTORIES_FILE, formatTable, macroAverage, resultJson, runEval, summarize, tabulate } from '../../src/eval/index.ts';
import { EmbeddedPolicy } from '../../src/policy/index.ts';
import { buildEnvironment, parseTrainConfig } from '../../src/train/index.ts';
import { runCli } from '../helpers/run-cli.ts';

const tmp = () => mkdtempSync(path.join(tmpdir(), 'qa-eval-'));

test('Wilson interval for 0/1 scores and normal interval for F1, by hand', () => {
  // p̂ = 0.4, n = 10: centre (0.4 + 0.19208)/1.38416 = 0.42778, half 1.96·√(0.024 + 0.00960)/1.38416 = 0.25956
  const w = summarize([1, 1, 1, 1, 0, 0, 0, 0, 0, 0]);
  assert.ok(Math.abs(w.lo - 0.16818) < 1e-4 && Math.abs(w.hi - 0.68734) < 1e-4, JSON.stringify(w));
  const f = summarize([0.5, 1, 0, 0.25]);
  // mean 0.4375, s² = 0.18229, half = 1.96·√(0.18229/4) = 0.41842
  assert.ok(Math.abs(f.lo - (0.4375 - 0.41842)) < 1e-4 && Math.abs(f.hi - (0.4375 + 0.41842)) < 1e-4);
  const avg = macroAverage([
    { n: 4, mean: 0.5, variance: 0.25 },
    { n: 16, mean: 0.25, variance: 0.16 },
  ]);
  assert.ok(Math.abs(avg.mean - 0.375) < 1e-12);
  assert.ok(Math.abs(avg.hi - avg.mean - (1.96 * Math.sqrt(0.25 / 4 + 0.16 / 16)) / 2) < 1e-12);
});

test('the JSON object has exactly datasets.{name}.{n, errors, skipped, metrics, ci95} and average.{metrics, ci95}: the table’s means and intervals', () => {
  const rec = (dataset: string, id: string, em: number, f1: number, accuracy: number) => ({
    dataset,
    id,
    question: '',
    answers: ['x'],
    samples: [],
    metrics: { em, f1, accuracy },
    errors: 0,
    tree: { promptId: id, prompt: '', nodes: {} },
  });
  const t = tabulate(ANSWER_METRICS, ['a', 'b'], [rec('a', '1', 1, 1, 1), rec('a', '2', 0, 0.5, 1), rec('b', '3', 0, 0, 0)]);
  const json = resultJson(t);
  const r4 = (x: number) => Math.round(x * 1e4) / 1e4;
  const ci = (s: { lo: number; hi: number }) => [r4(s.lo), r4(s.hi)];
  const a = t.datasets.get('a')!.metrics;
  const b = t.datasets.get('b')!.metrics;
  assert.deepEqual(json, {
    datasets: {
      a: { n: 2, errors: 0, skipped: 0, em: 0.5, f1: 0.75, accuracy: 1, ci95: { em: ci(a.em!), f1: ci(a.f1!), accuracy: ci(a.accuracy!) } },
      b: { n: 1, errors: 0, skipped: 0, em: 0, f1: 0, accuracy: 0, ci95: { em: ci(b.em!), f1: ci(b.f1!), accuracy: ci(b.accuracy!) } },
    },
    average: { em: 0.25, f1: 0.375, accuracy: 0.5, ci95: { em: ci(t.average.em!), f1: ci(t.average.f1!), accuracy: ci(t.average.accuracy!) } },
  });
  // The intervals are the table's, and real ones: dataset a's em (one success of two) spans most of [0, 1].
  const aEm = (resultJson(t).datasets.a!.ci95 as Record<string, [number, number]>).em!;
  assert.ok(aEm[0] < 0.5 && aEm[1] > 0.5 && aEm[1] - aEm[0] > 0.3, JSON.stringify(aEm));
  assert.ok(formatTable(t).includes(`${a.em!.lo.toFixed(3)}, ${a.em!.hi.toFixed(3)}]`));
  assert.match(formatTable(t), /^dataset +n +errors +em \[95% CI\] +f1 \[95% CI\] +accuracy \[95% CI\]\n/);
  assert.match(formatTable(t), /\naverage +0\.250 \[/);
  // Questions skipped at setup (too long for the context) get a column beside n, and the JSON's count; the means are over n.
  const s = tabulate(ANSWER_METRICS, ['a', 'b'], [rec('a', '1', 1, 1, 1), rec('b', '3', 0, 0, 0)], new Map([['a', 2]]));
  assert.equal(resultJson(s).datasets.a!.skipped, 2);
  assert.equal(resultJson(s).datasets.a!.n, 1);
  assert.match(formatTable(s), /^dataset +n +errors +skipped +em \[95% CI\].*\na +1 +0 +2 +1\.000 \[.*\nb +1 +0 +0 +0\.000 \[/s);
});

test('CLI: every environment kind evaluates through one command; --json prints one object', async () => {
  const world = await runCli(['eval', '--env', 'world', '--policy', 'embedded', '--questions', '12', '--out', tmp(), '--json', '--quiet']);
  assert.equal(world.code, 0, world.stderr);
  const w = JSON.parse(world.stdout) as { datasets: Record<string, Record<string, number>>; average: Record<string, number> };
  assert.equal(world.stdout.trim().split('\n').length, 1);
  assert.deepEqual(Object.keys(w.datasets), ['world']);
  assert.deepEqual(Object.keys(w.datasets.world!).sort(), ['accuracy', 'ci95', 'em', 'errors', 'f1', 'n', 'skipped']);
  assert.equal(w.datasets.world!.n, 12);
  const sim = await runCli(['eval', '--env', 'simulator', '--policy', 'scripted', '--questions', '30', '--out', tmp(), '--json', '--quiet']);
  assert.equal(sim.code, 0, sim.stderr);
  const s = JSON.parse(sim.stdout) as { datasets: { simulator: { n: number; accuracy: number } } };
  assert.equal(s.datasets.simulator.n, 30);
  assert.ok(s.datasets.simulator.accuracy > 0 && s.datasets.simulator.accuracy < 1);
  // math-world: one row per difficulty; bfcl: one row per category (both with their scripted policy).
  const mw = await runCli(['eval', '--env', 'math-world', '--policy', 'scripted', '--questions', '4', '--out', tmp(), '--json', '--quiet']);
  assert.equal(mw.code, 0, mw.stderr);
  assert.deepEqual(Object.keys((JSON.parse(mw.stdout) as { datasets: object }).datasets), [
    'math-world-1step',
    'math-world-2step',
    'math-world-3step',
    'math-world-4step',
  ]);
  const bf = await runCli(['eval', '--env', 'bfcl', '--policy', 'scripted', '--questions', '2', '--max-turns', '60', '--out', tmp(), '--json', '--quiet']);
  assert.equal(bf.code, 0, bf.stderr);
  assert.deepEqual(Object.keys((JSON.parse(bf.stdout) as { datasets: object }).datasets).sort(), [
    'bfcl_base',
    'bfcl_long_context',
    'bfcl_miss_func',
    'bfcl_miss_param',
  ]);
  const out = tmp();
  const qa = await runCli(['eval', '--env', 'qa', '--datasets', 'musique,bamboogle:eval', '--policy', 'embedded', '--questions', '5', '--out', out, '--quiet']);
  assert.equal(qa.code, 0, qa.stderr);
  assert.match(qa.stdout, /^dataset .*\nmusique +5 +0 .*\nbamboogle +5 +0 .*\naverage /);
  const lines = readFileSync(path.join(out, TRAJECTORIES_FILE), 'utf8').trim().split('\n');
  assert.equal(lines.length, 10);
  const html = readFileSync(path.join(out, 'index.html'), 'utf8');
  assert.match(html, /<table id="eval-table">/);
  assert.match(html, /id="viewer-data"/);
  // The same folder with other settings is refused, naming the field.
  const other = await runCli(['eval', '--env', 'qa', '--datasets', 'musique', '--policy', 'embedded', '--questions', '5', '--out', out, '--quiet']);
  assert.equal(other.code, 2);
  assert.match(other.stderr, /other settings \(spec\.env\.datasets.* differs\)/);
  const bad = await runCli(['eval', '--policy', 'openai', '--env', 'qa', '--out', tmp()]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--base-url/);
});

test('a partial last line (killed writer) is cut off; results per question do not depend on concurrency', async () => {
  const config = parseTrainConfig({ env: { kind: 'world', questions: 200 } });
  const setup = await buildEnvironment(config);
  const suite = { kind: 'world', env: setup.env, datasets: new Map([['world', setup.test.slice(0, 16)]]) };
  const run = async (dir: string, concurrency: number) => {
    const policy = new EmbeddedPolicy({ candidates: setup.candidates! });
    return runEval({ suite, policy, samples: 3, greedy: false, concurrency, seed: 5, store: EvalStore.open(dir, { x: 1 }) });
  };
  const a = await run(tmp(), 1);
  const dir = tmp();
  const b = await run(dir, 8);
  assert.deepEqual(resultJson(b), resultJson(a));
  appendFileSync(path.join(dir, TRAJECTORIES_FILE), '{"dataset": "world", "id": "trunc');
  const reopened = EvalStore.open(dir, { x: 1 });
  assert.equal(readFileSync(path.join(dir, TRAJECTORIES_FILE), 'utf8').trim().split('\n').length, 16);
  const c = await runEval({ suite, policy: new EmbeddedPolicy({ candidates: setup.candidates! }), samples: 3, greedy: false, seed: 5, store: reopened });
  assert.deepEqual(resultJson(c), resultJson(a), 'nothing left to do: the same table');
  assert.ok(a.records.every((r) => r.samples.length === 3));
});

test('a resumed evaluation scores the questions it kept from their stored trees (records written before a metric existed)', async () => {
  const config = parseTrainConfig({ env: { kind: 'world', questions: 200 } });
  const setup = await buildEnvironment(config);
  const suite = { kind: 'world', env: setup.env, datasets: new Map([['world', setup.test.slice(0, 8)]]) };
  const dir = tmp();
  const a = await runEval({
    suite,
    policy: new EmbeddedPolicy({ candidates: setup.candidates! }),
    samples: 2,
    greedy: false,
    seed: 2,
    store: EvalStore.open(dir, { x: 1 }),
  });
  assert.ok(
    a.records.some((r) => r.metrics.accuracy! > 0),
    'some success to lose',
  );
  // As an older version wrote them: EM and F1 only.
  const file = path.join(dir, TRAJECTORIES_FILE);
  const old = readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => {
      const r = JSON.parse(l) as { metrics: Record<string, number>; samples: Array<{ metrics: Record<string, number> }> };
      delete r.metrics.accuracy;
      for (const s of r.samples) delete s.metrics.accuracy;
      return JSON.stringify(r);
    });
  writeFileSync(file, old.join('\n') + '\n');
  const b = await runEval({
    suite,
    policy: new EmbeddedPolicy({ candidates: setup.candidates! }),
    samples: 2,
    greedy: false,
    seed: 2,
    store: EvalStore.open(dir, { x: 1 }),
  });
  assert.deepEqual(resultJson(b), resultJson(a));
});
