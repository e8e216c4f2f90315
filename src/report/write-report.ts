import { AtomicWriteError, writeFileAtomic } from '../store/atomic-write.ts';
import { refuseRunFile } from '../store/own-files.ts';
import { ForeignOutputError, refuseForeignOutput, startsWithText, type OutputSignature } from '../store/own-output.ts';
import { makeRunDir } from '../store/run-dir.ts';
import { dirname, resolve } from 'node:path';
import { byStrategy } from './aggregate.ts';
import { buildCharts } from './charts.ts';
import { ReportError } from './errors.ts';
import { loadRun, loadTrees, type RunData } from './load-runs.ts';
import { renderPage, type RenderedChart, type ViewerData } from './page.ts';
import { renderSvg } from './render-svg.ts';
import { replayNotes } from './replay-notes.ts';
import { promptCacheNotes } from './prompt-cache-notes.ts';
import { summarize, type Summary } from './summary.ts';
import { toViewTree } from './tree-data.ts';
import type { RolloutTree } from '../tree/types.ts';

export interface WriteReportOptions {
  /** Run folders (each holding run.sqlite). Runs sharing config.strategy.name are averaged over seeds. */
  runs: string[];
  /** The HTML file to write (its folder is created when missing). */
  out: string;
  /** Prompts embedded per step in the tree viewer. */
  maxPromptsPerStep?: number;
  /** Characters kept from each turn text, action input and observation in the viewer. */
  maxTextChars?: number;
  /** Upper bound on the viewer's embedded JSON; prompts per step are halved until it fits. */
  maxViewerBytes?: number;
}

/** What the report says in numbers, for the CLI to print. */
export interface ReportResult {
  out: string;
  bytes: number;
  runs: number;
  summary: Summary;
  /** Charts left out for lack of data, and runs whose config lacked fields. */
  notes: string[];
}

/** A report this command wrote earlier (its page opens with this title), which a rerun replaces. */
export const REPORT_OUTPUT: OutputSignature = {
  what: 'an HTML report written by trace-rl report',
  matches: (head) => startsWithText(head, '<!doctype html>') && new TextDecoder().decode(head.subarray(0, 1024)).includes('<title>trace-rl report</title>'),
};

/**
 * Builds the HTML report of some runs and writes it atomically (a temporary file in the same folder,
 * then rename), so a reader never sees half a report.
 */
export async function writeReport(options: WriteReportOptions): Promise<ReportResult> {
  const maxPrompts = options.maxPromptsPerStep ?? 40;
  const maxChars = options.maxTextChars ?? 600;
  const maxViewerBytes = options.maxViewerBytes ?? 6_000_000;
  if (options.runs.length === 0) throw new ReportError('no run folder given: pass at least one RUN_DIR');
  const dirs = [...new Set(options.runs.map((d) => resolve(d)))];
  refuseRunFile(options.out, dirs);
  refuseForeignOutput(options.out, REPORT_OUTPUT);
  const runs = dirs.map((d) => loadRun(d));
  const notes = runs.flatMap((r) => r.notes);
  for (const r of runs) if (r.steps.length === 0) notes.push(`${r.dir}: no completed step yet`);
  notes.push(...replayNotes(runs));
  notes.push(...promptCacheNotes(runs));

  const charts: RenderedChart[] = [];
  for (const c of buildCharts(runs)) {
    if (c.spec) charts.push({ id: c.id, title: c.title, caption: c.caption, svg: await renderSvg(c.spec) });
    else {
      charts.push({ id: c.id, title: c.title, caption: c.caption, note: c.note });
      notes.push(`chart “${c.title}” not shown: ${c.note}`);
    }
  }
  const summary = summarize(runs);
  const sample = sampleTrees(runs);
  let prompts = maxPrompts;
  let viewer = viewerData(sample, prompts, maxChars);
  // Long texts or big trees could still make the file heavy: show fewer prompts rather than a page that will not open.
  while (prompts > 1 && Buffer.byteLength(JSON.stringify(viewer)) > maxViewerBytes) {
    prompts = Math.max(1, Math.floor(prompts / 2));
    viewer = viewerData(sample, prompts, maxChars);
  }
  if (prompts < maxPrompts)
    notes.push(`the tree viewer shows at most ${prompts} prompt(s) per step instead of ${maxPrompts} to keep its data near ${maxViewerBytes} bytes`);
  const html = renderPage({ runs, summary, charts, viewer, notes });

  const out = resolve(options.out);
  makeRunDir(dirname(out)); // checked one level at a time: Node's recursive mkdir spins forever under /proc
  try {
    writeFileAtomic(out, html, { replaces: REPORT_OUTPUT });
  } catch (e) {
    if (e instanceof ForeignOutputError) throw e;
    throw new ReportError(e instanceof AtomicWriteError ? e.message : `cannot write ${out}: ${(e as Error).message}`);
  }
  return { out, bytes: Buffer.byteLength(html), runs: runs.length, summary, notes };
}

interface TreeSample {
  run: RunData;
  steps: Array<{ step: number; trees: RolloutTree[] }>;
}

/**
 * Trees are most of a run's bytes, so the viewer embeds a bounded sample: the first run (lowest seed)
 * of each strategy, and its first and last step.
 */
function sampleTrees(runs: RunData[]): TreeSample[] {
  const out: TreeSample[] = [];
  for (const group of byStrategy(runs).values()) {
    const run = group[0];
    const stepNumbers = run.steps.map((s) => s.step);
    if (stepNumbers.length === 0) continue;
    const chosen = [...new Set([stepNumbers[0], stepNumbers[stepNumbers.length - 1]])];
    const trees = loadTrees(run.dir, chosen);
    out.push({ run, steps: chosen.map((step) => ({ step, trees: trees.get(step) ?? [] })) });
  }
  return out;
}

/** The viewer's embedded data: at most `maxPrompts` prompts per sampled step, texts cut to `maxChars`. */
function viewerData(sample: TreeSample[], maxPrompts: number, maxChars: number): ViewerData {
  const runs: ViewerData['runs'] = sample.map(({ run, steps }) => ({
    label: `${run.strategy}${run.seed !== null ? ` (seed ${run.seed})` : ''}`,
    strategy: run.strategy,
    seed: run.seed,
    steps: steps.map(({ step, trees }) => ({ step, trees: trees.slice(0, maxPrompts).map((t) => toViewTree(t, { maxChars })) })),
  }));
  const limits =
    `To keep this file small the viewer embeds only the first run (lowest seed) of each strategy, its first and last step, ` +
    `at most ${maxPrompts} prompts per step, and at most ${maxChars} characters of each text; the run folders hold every tree.`;
  return { runs, limits };
}
