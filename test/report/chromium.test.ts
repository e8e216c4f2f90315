/**
 * Opens the report in headless Chromium (Debian's `chromium` package) and checks that the page renders
 * and its script runs without error: the viewer writes data-report-ready="1" on <body> and the first
 * tree into the DOM, which --dump-dom shows. The runs are synthetic (test/report/synthetic-runs.ts:
 * no training needed). A missing Chromium is a failure, not a skip.
 */
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { writeReport } from '../../src/report/index.ts';
import type { ViewerData } from '../../src/report/page.ts';
import { writeSyntheticRun } from './synthetic-runs.ts';

const INSTALL = 'headless Chromium is needed for this test: install it with `apt-get update && apt-get install -y chromium` (.ci/run does this in CI)';

function findChromium(): string {
  for (const name of ['chromium', 'chromium-browser']) {
    const r = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
    if (r.status === 0 && r.stdout.trim()) return r.stdout.trim();
  }
  assert.fail(INSTALL);
}

/** Runs headless Chromium on a file with a fresh profile and no network-using background services. */
function chromium(file: string, extra: string[]): string {
  const args = [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
    `--user-data-dir=${mkdtempSync(join(tmpdir(), 'trace-chromium-'))}`,
    ...extra,
    pathToFileURL(file).href,
  ];
  const r = spawnSync(findChromium(), args, { encoding: 'utf8', timeout: 60_000, maxBuffer: 64 * 1024 * 1024 });
  assert.equal(r.error, undefined, `chromium failed to run: ${r.error?.message}`);
  assert.equal(r.status, 0, `chromium exited with ${r.status}: ${r.stderr.slice(-2000)}`);
  return r.stdout;
}

/** The opening <body …> tag of a dumped DOM (the inline script's own text also names the markers). */
function bodyTag(dom: string): string {
  const m = dom.match(/<body[^>]*>/);
  assert.ok(m, 'the dumped DOM has a <body>');
  return m[0];
}

let root: string;
let out: string;
let viewer: ViewerData;

before(async () => {
  findChromium();
  root = mkdtempSync(join(tmpdir(), 'trace-report-browser-'));
  const dirs = ['grpo', 'trace'].map((strategy) => writeSyntheticRun({ dir: join(root, strategy), strategy, seed: 3, steps: 4, prompts: 4 }).dir);
  out = join(root, 'report.html');
  await writeReport({ runs: dirs, out });
  const m = readFileSync(out, 'utf8').match(/<script type="application\/json" id="viewer-data">([\s\S]*?)<\/script>/);
  viewer = JSON.parse(m![1]) as ViewerData;
});

test('the report renders in headless Chromium and its tree viewer script runs without error', () => {
  const dom = chromium(out, ['--dump-dom']);
  assert.match(dom, /<body[^>]*data-report-ready="1"/, 'the viewer script finished');
  assert.doesNotMatch(bodyTag(dom), /data-report-error/, 'no script error');
  const trees = viewer.runs.reduce((a, r) => a + r.steps.reduce((b, s) => b + s.trees.length, 0), 0);
  assert.ok(dom.includes(`Tree viewer ready: ${trees} trees embedded.`));
  assert.ok((dom.match(/<svg\b/g) ?? []).length >= 10, 'the charts are in the rendered DOM');
  // The viewer opens on the first run with expanded prefixes (here trace), its last step, at the first
  // prompt with an expanded prefix (else mixed, else first).
  assert.equal(viewer.runs[1].strategy, 'trace');
  const step = viewer.runs[1].steps.at(-1)!;
  const shown = step.trees.find((t) => Object.values(t.nodes).some((n) => n.expanded)) ?? step.trees.find((t) => t.mixed) ?? step.trees[0];
  const rendered = dom.match(/<details class="tree-node/g) ?? [];
  assert.equal(rendered.length, Object.keys(shown.nodes).length, 'every node of the shown tree is rendered');
  assert.ok(dom.includes(`<option value="1">trace (seed 3)</option>`), 'the run select lists the runs');
  assert.ok((dom.match(/class="badge k"/g) ?? []).length > 0, 'expanded prefixes show their K');
});

test('a script error shows in the DOM (so the check above can fail)', () => {
  const broken = join(root, 'broken.html');
  writeFileSync(
    broken,
    readFileSync(out, 'utf8').replace('<script type="application/json" id="viewer-data">{', '<script type="application/json" id="viewer-data">{oops'),
  );
  const dom = chromium(broken, ['--dump-dom']);
  assert.match(bodyTag(dom), /data-report-error="[^"]*JSON/);
  assert.doesNotMatch(bodyTag(dom), /data-report-ready/);
});

test('a screenshot of the report can be taken', () => {
  const png = join(root, 'report.png');
  chromium(out, [`--screenshot=${png}`, '--window-size=1280,2400', '--hide-scrollbars']);
  const bytes = readFileSync(png);
  assert.deepEqual([...bytes.subarray(1, 4)], [0x50, 0x4e, 0x47], 'a PNG file');
  assert.equal(bytes.readUInt32BE(16), 1280, 'PNG width is the window width');
  assert.ok(bytes.length > 50_000, 'the screenshot shows more than a blank page');
});
