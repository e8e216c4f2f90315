/**
 * The report built from real run folders (real SQLite through RunStore). The runs are synthetic
 * (test/report/synthetic-runs.ts), so that many strategies, seeds and steps cost no training; their
 * details are typed by the loop's own schema (src/record/step-details.ts).
 */
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ReportError, writeReport, type ReportResult } from '../../src/report/index.ts';
import { escapeHtml, type ViewerData } from '../../src/report/page.ts';
import { RunStore } from '../../src/store/index.ts';
import { METRICS } from '../../src/record/metrics.ts';
import { writeSyntheticRun, type SyntheticRun } from './synthetic-runs.ts';

const STEPS = 6;
const PROMPTS = 6;
let root: string;
let out: string;
let html: string;
let result: ReportResult;
const runs: Array<SyntheticRun & { strategy: string; seed: number }> = [];

before(async () => {
  root = mkdtempSync(join(tmpdir(), 'trace-report-'));
  for (const strategy of ['trace', 'grpo']) {
    for (const seed of [1, 2]) {
      const run = writeSyntheticRun({ dir: join(root, `${strategy}-${seed}`), strategy, seed, steps: STEPS, prompts: PROMPTS });
      runs.push({ ...run, strategy, seed });
    }
  }
  out = join(root, 'out', 'report.html');
  result = await writeReport({ runs: runs.map((r) => r.dir), out });
  html = readFileSync(out, 'utf8');
});

function viewerData(page: string): ViewerData {
  const m = page.match(/<script type="application\/json" id="viewer-data">([\s\S]*?)<\/script>/);
  assert.ok(m, 'the page embeds the viewer data');
  return JSON.parse(m[1]) as ViewerData;
}

test('the report is one HTML file with every chart as inline SVG', () => {
  assert.ok(html.startsWith('<!doctype html>'));
  assert.equal(result.out, out);
  assert.equal(result.bytes, Buffer.byteLength(html));
  const svgs = html.match(/<svg\b/g) ?? [];
  assert.ok(svgs.length >= 10, `expected ≥ 10 SVG charts, got ${svgs.length}`);
  assert.ok(!html.includes('Not shown:'), 'every chart has data in these runs');
  assert.deepEqual(result.notes, []);
  for (const id of [
    'test_accuracy-vs-cum_trajectories',
    'test_accuracy-vs-cum_tokens',
    'effective_ratio-vs-step',
    'calibration',
    'budget-per-step',
    'continuations-by-depth',
    'time-split',
  ]) {
    assert.match(html, new RegExp(`id="chart-${id}"><h3>[^<]*</h3><svg`), `chart ${id} is an SVG`);
  }
  assert.deepEqual(readdirSync(join(root, 'out')), ['report.html'], 'no temporary file is left behind');
});

test('the page makes no external request', () => {
  assert.doesNotMatch(html, /https?:\/\//i);
  assert.doesNotMatch(html, /<link\b/i);
  assert.doesNotMatch(html, /<(script|img|iframe)\b[^>]*\bsrc\s*=/i);
  assert.doesNotMatch(html, /url\(|@import/i);
});

test('metric meanings come from the metrics registry', () => {
  for (const key of ['effective_ratio', 'test_accuracy', 'cost_continuations', 'time_rollout_ms']) {
    const meaning = METRICS.find((m) => m.key === key)!.meaning;
    assert.ok(html.includes(escapeHtml(meaning)), `the page quotes the registry's meaning of ${key}`);
  }
});

test('tree text is escaped: a prompt holding </script> and tags cannot break the page', () => {
  assert.equal(html.match(/<\/script>/g)?.length, 2, 'only the two real script elements close');
  assert.ok(!html.includes('<b>"X"'), 'no raw markup from tree text');
  const data = viewerData(html);
  assert.match(data.runs[0].steps[0].trees[0].prompt, /<b>"X" & Y<\/b><\/script>/, 'the text itself survives the JSON round trip');
});

test('the viewer embeds the first and last step of the lowest-seed run of each strategy, with ρ from q and r', () => {
  const data = viewerData(html);
  assert.deepEqual(
    data.runs.map((r) => r.label),
    ['grpo (seed 1)', 'trace (seed 1)'],
  );
  assert.match(data.limits, /first and last step/);
  for (const vr of data.runs) {
    assert.deepEqual(
      vr.steps.map((s) => s.step),
      [0, STEPS - 1],
    );
    const store = RunStore.open(join(root, `${vr.strategy}-1`), { readonly: true });
    for (const s of vr.steps) {
      const stored = store.trees(s.step);
      assert.deepEqual(
        s.trees.map((t) => t.promptId),
        stored.map((t) => t.promptId),
      );
      for (const [i, t] of s.trees.entries()) {
        assert.deepEqual(Object.keys(t.nodes).sort(), Object.keys(stored[i].nodes).sort());
        for (const n of Object.values(stored[i].nodes)) {
          const v = t.nodes[n.id];
          assert.equal(v.predicted, n.predicted);
          assert.equal(v.expanded, n.expanded);
          assert.equal(v.reward, n.reward);
          if (n.expanded) {
            assert.ok(v.r === 0 || v.r === 1, `expanded prefix ${n.id} knows its observed outcome`);
            const rho = v.r! * n.predicted! + (1 - v.r!) * (1 - n.predicted!);
            assert.ok(Math.abs(v.rho! - rho) < 1e-12);
            assert.ok(Math.abs(v.vPref! - (1 - rho ** n.expanded)) < 1e-12);
          }
        }
      }
    }
    store.close();
  }
  const traceExpanded = data.runs[1].steps
    .flatMap((s) => s.trees)
    .flatMap((t) => Object.values(t.nodes))
    .filter((n) => n.expanded);
  assert.ok(traceExpanded.length > 0, 'the trace run has expanded prefixes to show');
});

/** Seed-mean of a metric per step, over the runs of a strategy, for the steps where it was logged. */
function seedMeanCurve(strategy: string, key: string): Array<{ step: number; mean: number }> {
  const group = runs.filter((r) => r.strategy === strategy);
  const out: Array<{ step: number; mean: number }> = [];
  for (let step = 0; step < STEPS; step++) {
    const vs = group.map((r) => r.steps[step].metrics[key]).filter((v) => v !== undefined);
    if (vs.length) out.push({ step, mean: vs.reduce((a, b) => a + b, 0) / vs.length });
  }
  return out;
}

test('headline numbers match what the runs logged', () => {
  const close = (a: number | null, b: number, what: string) => assert.ok(a !== null && Math.abs(a - b) < 1e-9, `${what}: ${a} vs ${b}`);
  const best = new Map(['trace', 'grpo'].map((s) => [s, Math.max(...seedMeanCurve(s, 'test_accuracy').map((p) => p.mean))]));
  const target = Math.min(...best.values());
  assert.ok(result.summary.target);
  close(result.summary.target.accuracy, target, 'target accuracy');
  assert.equal(result.summary.target.setBy, [...best].find(([, v]) => v === target)![0]);
  assert.deepEqual(
    result.summary.strategies.map((s) => s.strategy),
    ['grpo', 'trace'],
  );
  for (const s of result.summary.strategies) {
    const group = runs.filter((r) => r.strategy === s.strategy);
    const avg = (f: (r: SyntheticRun) => number) => group.map(f).reduce((a, b) => a + b, 0) / group.length;
    assert.equal(s.runs, 2);
    assert.deepEqual(s.seeds, [1, 2]);
    const lastAcc = (r: SyntheticRun) => [...r.steps].reverse().find((x) => x.metrics.test_accuracy !== undefined)!.metrics.test_accuracy;
    close(s.finalTestAccuracy, avg(lastAcc), `${s.strategy} final accuracy`);
    close(
      s.meanEffectiveRatio,
      avg((r) => r.steps.reduce((a, x) => a + x.metrics.effective_ratio, 0) / r.steps.length),
      `${s.strategy} effective ratio`,
    );
    close(
      s.totalCost.trajectories,
      avg((r) => r.steps.reduce((a, x) => a + x.metrics.cost_trajectories, 0)),
      `${s.strategy} trajectories`,
    );
    close(
      s.totalCost.turns,
      avg((r) => r.steps.reduce((a, x) => a + x.metrics.cost_turns, 0)),
      `${s.strategy} turns`,
    );
    close(
      s.totalCost.tokens,
      avg((r) => r.steps.reduce((a, x) => a + x.metrics.cost_tokens, 0)),
      `${s.strategy} tokens`,
    );
    const hit = seedMeanCurve(s.strategy, 'test_accuracy').find((p) => p.mean >= target - 1e-12)!;
    close(
      s.costToTarget?.trajectories ?? null,
      avg((r) => r.steps[hit.step].metrics.cum_trajectories),
      `${s.strategy} cost to target`,
    );
  }
});

test('runs missing details or config fields still give a report, with notes saying what is missing', async () => {
  const dir = join(root, 'bare-run');
  writeSyntheticRun({ dir, strategy: 'trace', seed: 7, steps: 3, prompts: 3, bareDetails: true, noStrategyName: true });
  const r = await writeReport({ runs: [dir], out: join(dir, 'report.html') });
  const page = readFileSync(r.out, 'utf8');
  assert.equal(r.summary.strategies[0].strategy, 'bare-run', 'labelled by folder name');
  assert.ok(r.notes.some((n) => n.includes('no strategy.name')));
  assert.ok(r.notes.some((n) => n.includes('details.reliability')));
  assert.ok(r.notes.some((n) => n.includes('continuationsByDepth')));
  assert.match(page, /Not shown: no step stored details\.reliability/);
  assert.ok((page.match(/<svg\b/g) ?? []).length >= 5, 'charts with data are still drawn');
});

test('a folder that is not a run gives a ReportError naming it and the fix', async () => {
  const empty = mkdtempSync(join(tmpdir(), 'trace-notrun-'));
  await assert.rejects(
    writeReport({ runs: [empty], out: join(empty, 'r.html') }),
    (e: unknown) => e instanceof ReportError && e.message.includes(empty) && /not a trace-rl run folder/.test(e.message),
  );
  const garbage = join(empty, 'garbage');
  mkdirSync(garbage);
  writeFileSync(join(garbage, 'run.sqlite'), 'this is not a database');
  await assert.rejects(writeReport({ runs: [garbage], out: join(empty, 'r.html') }), (e: unknown) => e instanceof ReportError && e.message.includes(garbage));
  await assert.rejects(writeReport({ runs: [], out: join(empty, 'r.html') }), ReportError);
  assert.deepEqual(readdirSync(empty).sort(), ['garbage'], 'nothing is written when the report fails');
});

test('the viewer stays within its prompt and byte limits and says so', async () => {
  const dirs = runs.map((r) => r.dir);
  const few = await writeReport({ runs: dirs, out: join(root, 'few.html'), maxPromptsPerStep: 2 });
  const fewData = viewerData(readFileSync(few.out, 'utf8'));
  assert.ok(fewData.runs.every((r) => r.steps.every((s) => s.trees.length === 2)));
  assert.match(fewData.limits, /at most 2 prompts per step/);

  const full = Buffer.byteLength(JSON.stringify(viewerData(html)));
  const cap = Math.floor(full / 3);
  const small = await writeReport({ runs: dirs, out: join(root, 'small.html'), maxViewerBytes: cap });
  const smallData = viewerData(readFileSync(small.out, 'utf8'));
  const shown = smallData.runs[0].steps[0].trees.length;
  assert.ok(shown < PROMPTS, `fewer prompts shown (${shown})`);
  assert.ok(Buffer.byteLength(JSON.stringify(smallData)) <= cap || shown === 1);
  assert.ok(small.notes.some((n) => n.includes(`at most ${shown} prompt(s) per step`)));
  assert.match(smallData.limits, new RegExp(`at most ${shown} prompts per step`));
});

test('runs are grouped by their arm label: two arms of one strategy side by side in one report', async () => {
  const dirs = ['adaptive', 'uniform-roots'].flatMap((arm) => [0, 1].map((seed) => join(root, `arm-${arm}-s${seed}`)));
  dirs.forEach((dir, i) => writeSyntheticRun({ dir, strategy: 'trace', seed: i % 2, steps: 2, prompts: 3, arm: i < 2 ? 'trace' : 'trace-uniform-roots' }));
  const r = await writeReport({ runs: dirs, out: join(root, 'arms.html') });
  assert.deepEqual(r.summary.strategies.map((s) => s.strategy).sort(), ['trace', 'trace-uniform-roots']);
});
