import { METRICS } from '../record/metrics.ts';
import type { RunData } from './load-runs.ts';
import type { Summary } from './summary.ts';
import type { ViewTree } from './tree-data.ts';
import { PAGE_CSS, VIEWER_SCRIPT } from './viewer-client.ts';

/** What the tree viewer embeds: a few runs, a few steps each, a bounded number of prompts per step. */
export interface ViewerData {
  runs: Array<{ label: string; strategy: string; seed: number | null; steps: Array<{ step: number; trees: ViewTree[] }> }>;
  /** Plain-words statement of what was left out, shown above the viewer. */
  limits: string;
}

/** A rendered chart: SVG markup, or a note saying why it is missing. */
export interface RenderedChart {
  id: string;
  title: string;
  caption: string;
  svg?: string;
  note?: string;
}

export interface PageInput {
  runs: RunData[];
  summary: Summary;
  charts: RenderedChart[];
  viewer: ViewerData;
  notes: string[];
}

export function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** JSON inside <script type="application/json">: only "</script" (or "<!--") could end it early. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c');
}

function num(v: number | null | undefined, digits = 3): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  return Math.abs(v) >= 1000 ? Math.round(v).toLocaleString('en-US') : Number(v.toFixed(digits)).toString();
}

function summaryTable(summary: Summary): string {
  // A server environment's load beside the tokens, when a run logged one.
  const served = summary.strategies.some((s) => s.environment !== null);
  const rows = summary.strategies
    .map(
      (s) =>
        `<tr><td>${escapeHtml(s.strategy)}</td><td>${s.runs}</td><td>${num(s.steps, 1)}</td><td>${num(s.finalTestAccuracy)}</td><td>${num(s.meanEffectiveRatio)}</td>` +
        `<td>${num(s.totalCost.trajectories)}</td><td>${num(s.totalCost.turns)}</td><td>${num(s.totalCost.tokens)}</td>` +
        (served ? `<td>${num(s.environment?.steps)}</td><td>${num(s.environment?.seconds, 1)}</td>` : '') +
        `<td>${s.costToTarget ? num(s.costToTarget.trajectories) : 'not reached'}</td><td>${s.costToTarget ? num(s.costToTarget.tokens) : 'not reached'}</td></tr>`,
    )
    .join('\n');
  const target = summary.target
    ? `<p class="caption">Target accuracy for “cost to reach”: <b>${num(summary.target.accuracy)}</b>, ${escapeHtml(summary.target.rule)} (here <b>${escapeHtml(summary.target.setBy)}</b>). Cost to reach is the seed-mean cumulative cost at the first evaluated step where the strategy’s seed-mean test accuracy is at least the target.</p>`
    : '<p class="note">No run logged test_accuracy, so there is no cost-to-reach column.</p>';
  return `<table id="summary"><thead><tr><th>strategy</th><th>runs</th><th>steps</th><th>final test accuracy</th><th>mean effective ratio</th>
<th>trajectories</th><th>turns</th><th>tokens</th>${served ? '<th>environment steps</th><th>environment seconds</th>' : ''}<th>trajectories to target</th><th>tokens to target</th></tr></thead>
<tbody>${rows}</tbody></table>
<p class="caption">Final test accuracy: mean over runs of each run’s last logged test_accuracy (${escapeHtml(meaningOf('test_accuracy'))}). Mean effective ratio: mean over steps, then runs (${escapeHtml(meaningOf('effective_ratio'))}). Costs: mean over runs of the total spend.${
    served
      ? ' Environment steps and seconds: the load each strategy put on the environment server, mean over runs of the whole run (env_steps + env_replayed_steps, and env_ms: the seconds in its resets and steps, summed over concurrent calls); equal tokens need not mean equal load.'
      : ''
  }</p>
${target}`;
}

function meaningOf(key: string): string {
  return METRICS.find((m) => m.key === key)?.meaning ?? key;
}

function chartFigure(c: RenderedChart): string {
  const body = c.svg ?? `<p>Not shown: ${escapeHtml(c.note ?? 'no data')}.</p>`;
  return `<figure class="chart${c.svg ? '' : ' missing'}" id="chart-${escapeHtml(c.id)}"><h3>${escapeHtml(c.title)}</h3>${body}<figcaption class="caption">${escapeHtml(c.caption)}</figcaption></figure>`;
}

function section(title: string, charts: RenderedChart[], ids: string[]): string {
  const chosen = ids.map((id) => charts.find((c) => c.id === id)).filter((c): c is RenderedChart => !!c);
  return `<h2>${escapeHtml(title)}</h2><div class="charts">${chosen.map(chartFigure).join('\n')}</div>`;
}

/** env qa: held-out EM per dataset (charts with ids eval_em/<dataset>-vs-…), when the runs logged it. */
function datasetSection(charts: RenderedChart[]): string {
  const ids = charts.filter((c) => c.id.startsWith('eval_em/') && c.svg).map((c) => c.id);
  return ids.length > 0 ? section('Held-out exact match per dataset', charts, ids) : '';
}

function runsTable(runs: RunData[]): string {
  const rows = runs
    .map(
      (r) =>
        `<tr><td>${escapeHtml(r.strategy)}</td><td>${r.seed ?? '–'}</td><td>${r.steps.length}</td><td>${escapeHtml(r.status)}</td><td>${escapeHtml(r.dir)}</td></tr>`,
    )
    .join('\n');
  return `<table id="runs"><thead><tr><th>strategy</th><th>seed</th><th>steps</th><th>status</th><th>folder</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function glossary(): string {
  const rows = METRICS.map(
    (m) => `<tr><td>${escapeHtml(m.key)}</td><td>${escapeHtml(m.group)}</td><td>${escapeHtml(m.meaning)}</td><td>${escapeHtml(m.formula)}</td></tr>`,
  ).join('\n');
  return `<details><summary>Metric glossary (from the metrics registry)</summary><table><thead><tr><th>key</th><th>group</th><th>meaning</th><th>formula</th></tr></thead><tbody>${rows}</tbody></table></details>`;
}

/** The whole report as one self-contained HTML document: inline CSS, inline SVG, one inline script. */
export function renderPage(input: PageInput): string {
  const { charts } = input;
  const notes = input.notes.length ? `<ul class="notes">${input.notes.map((n) => `<li>${escapeHtml(n)}</li>`).join('')}</ul>` : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>trace-rl report</title><style>${PAGE_CSS}</style></head>
<body><main>
<h1>trace-rl report</h1>
<p class="meta">${input.runs.length} run(s), ${input.summary.strategies.length} strateg${input.summary.strategies.length === 1 ? 'y' : 'ies'}. Self-contained: no network access needed.</p>
${notes}
<h2>Summary</h2>
${summaryTable(input.summary)}
${runsTable(input.runs)}
${section('Learning curves: accuracy and reward against cost', charts, ['test_accuracy-vs-cum_trajectories', 'test_accuracy-vs-cum_tokens', 'test_accuracy_sampled-vs-cum_trajectories', 'test_accuracy_sampled-vs-cum_tokens', 'reward_mean-vs-cum_trajectories', 'reward_mean-vs-cum_tokens'])}
${datasetSection(charts)}
${section('Contrast: effective ratio per step', charts, ['effective_ratio-vs-step'])}
${section('Predictor calibration', charts, ['calibration'])}
${section('Where the budget went', charts, ['budget-per-step', 'root-allocation', 'continuations-by-depth'])}
${section('Time', charts, ['time-split'])}
<h2>Rollout trees</h2>
<p class="note">${escapeHtml(input.viewer.limits)}</p>
<div class="legend"><b>Reading a tree.</b> Each line is one turn (t = turns from the prompt); nested lines continue it. Blue edge: bare rollout; orange edge and “cont”: a continuation from a prefix.
<b>Ṽ</b>: the predictor’s success probability when the budget was allocated. <b>ρ</b> = r·q + (1−r)(1−q), with q = Ṽ and r the observed outcome of the rollout the prefix lies on: the chance a new continuation repeats that outcome.
<b>K</b>: continuations allocated to the prefix; the solver favours low ρ, because 1 − ρ^K is the chance of getting the other outcome. Leaves: <span class="badge r1">r=1</span> success, <span class="badge r0">r=0</span> failure. Hover a badge for the numbers.</div>
<div class="controls"><label>run <select id="sel-run"></select></label><label>step <select id="sel-step"></select></label><label>prompt <select id="sel-prompt"></select></label></div>
<p id="viewer-status" class="note">Tree viewer: needs JavaScript.</p>
<div id="tree-out"></div>
<h2>Metrics</h2>
${glossary()}
</main>
<script type="application/json" id="viewer-data">${scriptJson(input.viewer)}</script>
<script>${VIEWER_SCRIPT}</script>
</body></html>
`;
}
