// The documented `compare` commands (and math-world's training), each as written in one workspace
// (test/docs/doc-shell.ts) in the order a reader meets them, so a later command's folder meets an
// earlier one's; appended: one seed, one step of 24 trajectories on 8 prompts, 5 held-out questions.
// An arm a later comparison runs with the same settings as README's first (trace recommended, grpo) is
// that run, copied into the later --out first: compare reuses a finished run it finds there (as it does
// for a reader who reruns it), so the doc's command still runs as written and trains only its new arms.
import assert from 'node:assert/strict';
import { cpSync, readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { docTests, DocWorkspace, rewrite, withFlags, type DocStep } from './doc-shell.ts';

const ws = new DocWorkspace('compare');
const SMALL = '--seeds 1 --steps 1 --budget 24 --pool 8 --set eval.questions=5';
/** Copies README's finished runs/compare arms into `out` (see the file comment). */
const reuse = (out: string, arms: string[]) => {
  for (const arm of arms) cpSync(ws.path('runs/compare', arm), ws.path(out, arm), { recursive: true });
};

/** Runs the comparison and checks its report and the arms' table. */
const compares =
  (out: string, arms: string[], shell = (text: string) => text) =>
  async (s: DocStep) => {
    const r = await ws.ok(s.place, withFlags(shell(s.text), SMALL), 240_000);
    for (const arm of arms) assert.match(r.stdout, new RegExp(`^${arm} +1 `, 'm'), `${s.place}: no row for ${arm}`);
    assert.match(readFileSync(ws.path(out, 'report.html'), 'utf8'), /<svg/);
    return r;
  };
const strategyOf = (dir: string) => parse(readFileSync(ws.path(dir, 'config.yaml'), 'utf8')).strategy as Record<string, unknown>;
const trains = (flags: string) => async (s: DocStep) => {
  const r = await ws.ok(s.place, withFlags(s.text, flags));
  assert.match(r.stdout, /finished 1 step/);
};

docTests('test/docs/run-compare.test.ts', [
  // `npm ci` is what this checkout already ran (CI runs it, then the tests: .ci/run); the main job follows it.
  ['npm ci && npx trace-rl compare', compares('runs/compare', ['trace', 'grpo'], (t) => rewrite(t, [['npm ci && ', '']]))],
  [
    'npx trace-rl compare --trace paper --out runs/compare-paper',
    async (s) => {
      reuse('runs/compare-paper', ['grpo-s0']);
      await compares('runs/compare-paper', ['trace', 'grpo'])(s);
      assert.equal(strategyOf('runs/compare-paper/trace-s0').preset, 'paper');
      assert.equal(strategyOf('runs/compare/trace-s0').preset, 'recommended');
    },
  ],
  [
    'npx trace-rl compare --strategies trace,grpo,random-tree,pcl,dapo --seeds 5 --out runs/all',
    async (s) => {
      reuse('runs/all', ['trace-s0', 'grpo-s0']);
      const r = await compares('runs/all', ['trace', 'grpo', 'random-tree', 'pcl', 'dapo'])(s);
      assert.match(r.stderr, /trace-s0: finished earlier, reused/);
    },
  ],
  [
    'npx trace-rl compare --set env.world.profile=late --strategies trace,grpo --seeds 3 --steps 10 --out runs/compare-late',
    compares('runs/compare-late', ['trace', 'grpo']),
  ],
  ['npx trace-rl train --env math-world --steps 10 --out runs/math', trains('--steps 1 --set eval.questions=5')],
  ['trace-rl train --env math-world --steps 10', trains('--steps 1 --set eval.questions=5')],
  ['trace-rl compare --env math-world --strategies trace,grpo --seeds 5 --steps 10 --out runs/compare-math', compares('runs/compare-math', ['trace', 'grpo'])],
]);
