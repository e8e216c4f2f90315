/**
 * The page of an evaluation (`trace-rl eval --out DIR` writes DIR/index.html): the table — per dataset
 * n, errors, each metric's mean with its 95 % interval, and the average — and the trajectories in the
 * report's tree viewer (one "run" per dataset, samples of a question as its bare rollouts).
 * Self-contained, like the training report.
 */
import { mkdirSync } from 'node:fs';
import { writeFileAtomic } from '../store/atomic-write.ts';
import { dirname } from 'node:path';
import type { RolloutTree } from '../tree/types.ts';
import { escapeHtml, type ViewerData } from './page.ts';
import { toViewTree } from './tree-data.ts';
import { PAGE_CSS, VIEWER_SCRIPT } from './viewer-client.ts';

export interface EvalPageInput {
  title: string;
  /** Lines describing what was evaluated (environment, policy, sampling). */
  about: string[];
  metrics: readonly string[];
  rows: Array<{ dataset: string; n: number; errors: number; metrics: Record<string, { mean: number; lo: number; hi: number }> }>;
  average?: Record<string, { mean: number; lo: number; hi: number }>;
  trees: Array<{ dataset: string; trees: RolloutTree[] }>;
  /** Questions shown per dataset in the viewer (default 100). */
  maxTrees?: number;
}

const cell = (s: { mean: number; lo: number; hi: number }) => `${s.mean.toFixed(3)} <span class="ci">[${s.lo.toFixed(3)}, ${s.hi.toFixed(3)}]</span>`;

export function renderEvalPage(input: EvalPageInput): string {
  const max = input.maxTrees ?? 100;
  const head = `<tr><th>dataset</th><th>n</th><th>errors</th>${input.metrics.map((m) => `<th>${escapeHtml(m)} [95% CI]</th>`).join('')}</tr>`;
  const body = input.rows
    .map(
      (r) =>
        `<tr><td>${escapeHtml(r.dataset)}</td><td>${r.n}</td><td>${r.errors}</td>${input.metrics.map((m) => `<td>${cell(r.metrics[m]!)}</td>`).join('')}</tr>`,
    )
    .join('\n');
  const avg =
    input.average && input.rows.length > 1
      ? `<tr class="avg"><td>average</td><td></td><td></td>${input.metrics.map((m) => `<td>${cell(input.average![m]!)}</td>`).join('')}</tr>`
      : '';
  const viewer: ViewerData = {
    runs: input.trees.map((t) => ({
      label: t.dataset,
      strategy: t.dataset,
      seed: null,
      steps: [{ step: 0, trees: t.trees.slice(0, max).map((tree) => toViewTree(tree, { maxChars: 1200 })) }],
    })),
    limits: `The viewer shows the first ${max} questions of each dataset (texts cut at 1200 characters); trajectories.jsonl holds every trajectory in full.`,
  };
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(input.title)}</title><style>${PAGE_CSS} .ci{color:#666;font-size:90%}</style></head>
<body><main>
<h1>${escapeHtml(input.title)}</h1>
<ul class="notes">${input.about.map((a) => `<li>${escapeHtml(a)}</li>`).join('')}</ul>
<table id="eval-table"><thead>${head}</thead><tbody>${body}${avg}</tbody></table>
<p class="caption">95 % intervals: Wilson for 0/1 metrics (EM, accuracy), normal for F1; the average is the unweighted mean over datasets. Errors: questions whose trajectory failed after its retries (scored 0; rerun the same command to retry them).</p>
<h2>Trajectories</h2>
<p class="note">${escapeHtml(viewer.limits)}</p>
<div class="controls"><label>dataset <select id="sel-run"></select></label><label>set <select id="sel-step"></select></label><label>question <select id="sel-prompt"></select></label></div>
<p id="viewer-status" class="note">Tree viewer: needs JavaScript.</p>
<div id="tree-out"></div>
</main>
<script type="application/json" id="viewer-data">${JSON.stringify(viewer).replace(/</g, '\\u003c')}</script>
<script>${VIEWER_SCRIPT}</script>
</body></html>
`;
}

/** Writes the page atomically (temporary file, then rename). */
export function writeEvalPage(file: string, input: EvalPageInput): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileAtomic(file, renderEvalPage(input));
}
