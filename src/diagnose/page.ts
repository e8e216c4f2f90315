import type { TopLevelSpec } from 'vega-lite';
import { promptCacheLine } from '../record/prompt-cache.ts';
import { escapeHtml } from '../report/page.ts';
import { renderSvg } from '../report/render-svg.ts';
import { PAGE_CSS } from '../report/viewer-client.ts';
import { diagnosisJson, perTokenVsRoot, type DiagnosisAbout } from './format.ts';
import type { Diagnosis } from './run.ts';

const WIDTH = 380;
const HEIGHT = 220;

/** One line per series over depth t (the report's charts are drawn the same way: vega-lite, SVG in Node). */
function lines(values: Array<{ depth: number; series: string; value: number }>, yTitle: string): TopLevelSpec {
  return {
    width: WIDTH,
    height: HEIGHT,
    data: { values },
    mark: { type: 'line', point: { size: 30 } },
    encoding: {
      x: { field: 'depth', type: 'quantitative', title: 'depth t (turns in the prefix)', axis: { tickMinStep: 1 } },
      y: { field: 'value', type: 'quantitative', title: yTitle },
      // Below the plot, one entry a line: the series names are sentences, and a side legend cuts them.
      color: {
        field: 'series',
        type: 'nominal',
        title: null,
        scale: { scheme: 'tableau10' },
        legend: { orient: 'bottom', direction: 'vertical', labelLimit: 600 },
      },
    },
  };
}

const num = (x: number | null | undefined, digits = 3) => (x === null || x === undefined ? 'n/a' : x.toFixed(digits));

/**
 * The diagnosis as one self-contained page (inline CSS and SVG, no script, no URL): where the outcome
 * contrast lies by depth, what a continuation costs there, and the table.
 */
export async function renderDiagnosisPage(d: Diagnosis, about: DiagnosisAbout): Promise<string> {
  const rootRow = d.rows.find((r) => r.depth === 0);
  const contrast = d.rows.flatMap((r) => [
    ...(r.share !== null ? [{ depth: r.depth, series: 'open share of the depth-0 variance', value: r.share }] : []),
    ...(r.contrast !== null ? [{ depth: r.depth, series: 'mean V(1−V) at open prefixes', value: r.contrast }] : []),
    ...(r.trueContrast !== undefined && r.trueContrast !== null ? [{ depth: r.depth, series: 'true V(1−V) (simulator)', value: r.trueContrast }] : []),
  ]);
  const t0 = rootRow?.cost.tokens ?? null;
  const n0 = rootRow?.cost.turns ?? null;
  const cost = d.rows.flatMap((r) => [
    ...(r.cost.tokens !== null && t0 ? [{ depth: r.depth, series: 'tokens (× a full rollout)', value: r.cost.tokens / t0 }] : []),
    ...(r.cost.turns !== null && n0 ? [{ depth: r.depth, series: 'policy calls (× a full rollout)', value: r.cost.turns / n0 }] : []),
    ...(perTokenVsRoot(r, rootRow) !== null ? [{ depth: r.depth, series: 'V(1−V) per token (× a full rollout)', value: perTokenVsRoot(r, rootRow)! }] : []),
  ]);
  const charts = [
    {
      title: 'Where the contrast lies',
      caption:
        'Proposition 2: the outcome contrast still open after t turns is V_t(1 − V_t). Share: its mean over every expanded rollout (rollouts that already ended count 0) divided by its mean at the root.',
      values: contrast,
      y: 'V(1 − V), share',
    },
    {
      title: 'What a continuation costs',
      caption:
        'Mean cost of one continuation from a depth-t prefix, relative to a full rollout from the root (depth 0 = 1 by definition); and the open V(1 − V) it buys per generated token, relative to a fresh rollout.',
      values: cost,
      y: '× a full rollout',
    },
  ];
  const svgs = await Promise.all(charts.map((c) => (c.values.length ? renderSvg(lines(c.values, c.y)) : Promise.resolve(undefined))));
  const truth = d.rows.some((r) => r.trueContrast !== undefined);
  const head = [
    'depth',
    'prefixes',
    'ended',
    'mean V',
    'V(1−V)',
    ...(truth ? ['true V(1−V)'] : []),
    'open share',
    'entropy (nats)',
    'turns',
    'tokens',
    'V(1−V)/token vs root',
  ];
  const body = d.rows
    .map(
      (r) =>
        `<tr>${[String(r.depth), String(r.prefixes), String(r.ended), num(r.meanV), num(r.contrast), ...(truth ? [num(r.trueContrast)] : []), num(r.share), num(r.entropy), num(r.cost.turns, 2), num(r.cost.tokens, 1), num(perTokenVsRoot(r, rootRow), 2)].map((c) => `<td>${escapeHtml(c)}</td>`).join('')}</tr>`,
    )
    .join('\n');
  const json = diagnosisJson(d, about);
  const title = `trace-rl diagnose: ${about.env}, ${about.policy}`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title><style>${PAGE_CSS}</style></head>
<body><main>
<h1>${escapeHtml(title)}</h1>
<ul class="notes"><li>${escapeHtml(`${about.prompts} prompts; k = ${about.k} trajectories per prefix (the root's k rollouts at depth 0; k continuations at every intermediate prefix of ${about.rollouts} bare rollout(s) per prompt); turn limit ${about.maxTurns}; seed ${about.seed}.`)}</li>
<li>${escapeHtml(`V(1−V) per prefix: the unbiased k/(k−1)·V̂(1−V̂), V̂ = the success rate of its k trajectories. Spent: ${json.spend.trajectories} trajectories, ${json.spend.turns} policy calls, ${json.spend.tokens} generated tokens.`)}</li>${
    d.engine?.tinker_prompt_tokens !== undefined ? `\n<li id="prompt-cache">${escapeHtml(`${promptCacheLine(d.engine)}.`)}</li>` : ''
  }</ul>
${charts.map((c, i) => `<section class="chart" id="chart-${i}"><h2>${escapeHtml(c.title)}</h2>${svgs[i] ?? '<p class="note">nothing to plot</p>'}<p class="caption">${escapeHtml(c.caption)}</p></section>`).join('\n')}
<h2>Per depth</h2>
<table id="diagnose-table"><thead><tr>${head.map((h) => `<th>${escapeHtml(h)}</th>`).join('')}</tr></thead><tbody>${body}</tbody></table>
<p class="caption">Costs are means over the continuations from that depth (turns = policy calls; tokens = generated tokens); depth 0 is a full rollout. Entropy: the policy's entropy at the next decision, where it reports one.</p>
</main></body></html>
`;
}
