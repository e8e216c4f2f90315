import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeReport } from '../../src/report/index.ts';
import { RunStore } from '../../src/store/index.ts';
import { buildEnvironment, storedTrainConfig } from '../../src/train/index.ts';
import { REPORTS, type Arm, type ExperimentName, type Report, type Scale } from './experiments.ts';
import { accuracyByKind, questionKind } from './by-kind.ts';
import { kindUse, loadRun, mixedAnchors, per100, readRecord, recordText, toRecord, type RunStats } from './load.ts';
import { barChart, bandChart, writeSvg, type BandRow, type BarRow } from './plots.ts';
import { fmt, fmtPaired, meanOf, pairedBootstrap, spread, type Spread } from './stats.ts';
import { oracleShareTable } from './oracle-share.ts';

export interface AnalyseOptions {
  out: string;
  plots: string;
  experiments: Map<ExperimentName, Arm[]>;
  seeds: readonly number[];
  runDir: (label: string, seed: number) => string;
  scale: Scale;
  machine: string;
  log: (line: string) => void;
  /** Re-evaluate by question kind only the first this many seeds of each arm (each costs one evaluation). */
  byKindSeeds?: number;
}

/**
 * Steps from which the predictor has seen enough trees to steer (the cold-start steps are uniform):
 * 10, or a third of the run for short runs (set by `analyse`).
 */
let WARM = 10;
/** The fixed held-out accuracy of the second cost-to-reach table. */
const FIXED_TARGET = 0.3;

interface ArmResult {
  arm: Arm;
  runs: RunStats[];
}

/** Reads every run, writes the HTML reports, the SVG plots, summary.md and summary.json. */
export async function analyse(o: AnalyseOptions): Promise<void> {
  WARM = Math.min(10, Math.floor(o.scale.steps / 3));
  const md: string[] = [`machine: ${o.machine}; date ${new Date().toISOString()}`, ''];
  const json: Record<string, unknown> = {};
  for (const [experiment, arms] of o.experiments) {
    const results: ArmResult[] = arms.map((arm) => ({
      arm,
      runs: o.seeds.map((s) => loadRun(o.runDir(arm.label, s)) ?? fromRecord(o.out, arm.label, s)).filter((r): r is RunStats => r !== null && r.finished),
    }));
    writeRecords(results, o.out);
    const missing = results.filter((r) => r.runs.length < o.seeds.length).map((r) => `${r.arm.label} (${r.runs.length}/${o.seeds.length})`);
    if (missing.length) md.push(`note: unfinished arms, shown with the seeds that finished: ${missing.join(', ')}`, '');
    if (results.every((r) => r.runs.length === 0)) continue;
    md.push(`### ${experiment}`, '');
    md.push(...armTable(results), '');
    // Simulator experiments (known probabilities, fixed policy): contrast against the oracle, no accuracy.
    const simulated = results.every((r) => r.arm.env === 'simulator');
    const target = simulated ? null : accuracyTarget(results);
    if (target) md.push(...costTable(results, target), '');
    // A fixed absolute level too (the rule above depends on the weakest arm): 0.30 held-out accuracy.
    if (!simulated) md.push(...costTable(results, { accuracy: FIXED_TARGET, setBy: '' }), '');
    if (simulated) md.push(...oracleLines(results), '');
    const report = REPORTS[experiment];
    if (report.paired)
      md.push(...perBudgetTable(results), '', ...pairedTable(results, report.paired === 'grpo' ? 'grpo' : undefined), '', ...reachGrpoTable(results), '');
    if (report.kinds) md.push(...(await kindTable(withFolders(results), o)), '');
    if (report.byKind) {
      const { byKind } = report;
      const chosen = withFolders(byKind === 'all' ? results : results.filter((r) => byKind.includes(r.arm.label)));
      md.push(
        ...(await finalByKindTable(
          chosen.map((r) => ({ ...r, runs: r.runs.slice(0, o.byKindSeeds ?? r.runs.length) })),
          o,
        )),
        '',
      );
    }
    json[experiment] = results.map((r) => ({ label: r.arm.label, meaning: r.arm.meaning, seeds: r.runs.map((x) => x.seed), ...armNumbers(r.runs) }));
    await writePlots(experiment, report, simulated, results, o.plots);
    // Runs with eval.samples > 0 also logged sampled held-out success: the same tables and curves on it.
    const sampled = results.map((r) => ({ ...r, runs: r.runs.filter((x) => x.sampledEvals.length > 0).map((x) => ({ ...x, evals: x.sampledEvals })) }));
    if (sampled.some((r) => r.runs.length > 0)) {
      md.push(`The same on sampled held-out accuracy (eval.samples rollouts per question, sampled as in training, at the policy's temperature):`, '');
      if (report.paired) md.push(...pairedTable(sampled, report.paired === 'grpo' ? 'grpo' : undefined), '', ...reachGrpoTable(sampled), '');
      json[`${experiment}-sampled`] = sampled.map((r) => ({ label: r.arm.label, seeds: r.runs.map((x) => x.seed), ...armNumbers(r.runs) }));
      if (report.curves) await writeCurves(`${experiment}-sampled`, 'sampled', sampled, o.plots);
    }
    // Runs whose policy supplies the truth (the simulator's tabular one) logged exact J on their training prompts.
    if (report.exact) {
      const exact = results.map((r) => ({ ...r, runs: r.runs.filter((x) => (x.exactEvals ?? []).length > 0).map((x) => ({ ...x, evals: x.exactEvals! })) }));
      md.push(
        'The same on exact J, the policy’s expected success on every training prompt (train_accuracy_exact, no sampling noise; a tabular policy shares nothing between prompts, so held-out J does not move):',
        '',
      );
      md.push(...pairedTable(exact, 'grpo'), '', ...oracleShareTable(exact), '');
      json[`${experiment}-exact`] = exact.map((r) => ({ label: r.arm.label, seeds: r.runs.map((x) => x.seed), ...armNumbers(r.runs) }));
    }
    await writeReports(experiment, results, o);
  }
  mkdirSync(o.out, { recursive: true });
  writeFileSync(join(o.out, 'summary.md'), md.join('\n') + '\n');
  writeFileSync(join(o.out, 'summary.json'), JSON.stringify(json));
  process.stdout.write(md.join('\n') + '\n');
  o.log(`wrote ${join(o.out, 'summary.md')}, reports in ${o.out}, plots in ${o.plots}`);
}

/**
 * A finished run whose folder is gone (run folders are not committed; a session's machine is not kept)
 * but whose record is: its numbers, with no folder (dir ''), so a final completed in a later session
 * still pairs every seed. Reports and by-kind tables, which read the folder, leave it out.
 */
function fromRecord(out: string, label: string, seed: number): RunStats | null {
  const path = join(out, 'records', `${label}-s${seed}.json`);
  if (!existsSync(path)) return null;
  const { label: _label, source: _source, ...stats } = readRecord(path);
  return { ...stats, dir: '' };
}

/** The runs whose folder is here (the tables that read the store: kinds, by kind). */
function withFolders(results: ArmResult[]): ArmResult[] {
  return results.map((r) => ({ ...r, runs: r.runs.filter((x) => x.dir !== '') }));
}

/** One small JSON record per finished run (see RunRecord), committed with the summary; bench/compare/pool.ts pairs them. */
function writeRecords(results: ArmResult[], out: string): void {
  const dir = join(out, 'records');
  mkdirSync(dir, { recursive: true });
  for (const { arm, runs } of results) for (const r of runs) writeFileSync(join(dir, `${arm.label}-s${r.seed}.json`), recordText(toRecord(arm.label, r)));
}

function armNumbers(runs: RunStats[]) {
  const lastAcc = runs.map((r) => r.evals[r.evals.length - 1]?.accuracy ?? NaN);
  return {
    ratio: spread(runs.map((r) => meanOf(r.ratio))),
    ratioWarm: spread(runs.map((r) => meanOf(r.ratio.slice(WARM)))),
    ratioStep0: spread(runs.map((r) => r.ratio[0])),
    mixed: spread(runs.map((r) => meanOf(r.mixed))),
    mixedWarm: spread(runs.map((r) => meanOf(r.mixed.slice(WARM)))),
    anchorsWarm: spread(runs.map((r) => meanOf(mixedAnchors(r).slice(WARM)))),
    prompts: spread(runs.map((r) => meanOf(r.prompts))),
    anchorYield: spread(runs.map((r) => meanOf(r.anchorYield))),
    continuationShare: spread(runs.map((r) => r.continuationShare)),
    finalAccuracy: spread(lastAcc),
    meanAccuracy: spread(runs.map((r) => meanOf(r.evals.filter((e) => e.step > 0).map((e) => e.accuracy)))),
    trajectories: spread(runs.map((r) => r.total.trajectories)),
    turns: spread(runs.map((r) => r.total.turns)),
    tokens: spread(runs.map((r) => r.total.tokens)),
    stepSeconds: spread(runs.map((r) => r.wallSeconds)),
  };
}

function armTable(results: ArmResult[]): string[] {
  const rows = [
    `| arm | what | seeds | effective ratio, all steps | effective ratio, steps ≥ ${WARM} | mixed trees / step (≥ ${WARM}) | mixed anchors / step (≥ ${WARM}) | prompts / step | mixed-anchor yield | continuation share | final test acc. | mean test acc. (evals after step 0) | trajectories | turns | tokens |`,
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const { arm, runs } of results) {
    if (runs.length === 0) continue;
    const n = armNumbers(runs);
    rows.push(
      `| ${arm.label} | ${arm.meaning} | ${runs.length} | ${fmt(n.ratio)} | ${fmt(n.ratioWarm)} | ${fmt(n.mixedWarm, 1)} | ${fmt(n.anchorsWarm, 1)} | ${fmt(n.prompts, 1)} | ${fmt(n.anchorYield)} | ${fmt(n.continuationShare, 2)} | ${fmt(n.finalAccuracy)} | ${fmt(n.meanAccuracy)} | ${fmt(n.trajectories, 0)} | ${fmt(n.turns, 0)} | ${fmt(n.tokens, 0)} |`,
    );
  }
  return rows;
}

/** Seed-mean accuracy per eval step of an arm, with the mean cost at that step. */
function curve(runs: RunStats[]) {
  const steps = [...new Set(runs.flatMap((r) => r.evals.map((e) => e.step)))].sort((a, b) => a - b);
  return steps.map((step) => {
    const at = runs.flatMap((r) => r.evals.filter((e) => e.step === step));
    return {
      step,
      accuracy: spread(at.map((e) => e.accuracy)),
      trajectories: meanOf(at.map((e) => e.trajectories)),
      turns: meanOf(at.map((e) => e.turns)),
      tokens: meanOf(at.map((e) => e.tokens)),
    };
  });
}

/** The fixed accuracy: the best seed-mean accuracy of the arm whose best is lowest (every arm reaches it once). */
function accuracyTarget(results: ArmResult[]): { accuracy: number; setBy: string } | null {
  let target: { accuracy: number; setBy: string } | null = null;
  for (const { arm, runs } of results) {
    if (runs.length === 0) continue;
    const best = Math.max(...curve(runs).map((p) => p.accuracy.mean));
    if (!target || best < target.accuracy) target = { accuracy: best, setBy: arm.label };
  }
  return target;
}

function costTable(results: ArmResult[], target: { accuracy: number; setBy: string }): string[] {
  const rows = [
    target.setBy
      ? `Cost to reach seed-mean test accuracy ${target.accuracy.toFixed(3)} (the best seed-mean accuracy of ${target.setBy}, the arm whose best is lowest), and how many seeds reach it on their own:`
      : `Cost to reach a fixed seed-mean test accuracy of ${target.accuracy.toFixed(2)}:`,
    '',
    '| arm | first eval reaching it (after step, 0-based) | trajectories | turns | tokens | seeds reaching it alone |',
    '|---|---|---|---|---|---|',
  ];
  for (const { arm, runs } of results) {
    if (runs.length === 0) continue;
    const hit = curve(runs).find((p) => p.accuracy.mean >= target.accuracy - 1e-12);
    const alone = runs.filter((r) => r.evals.some((e) => e.accuracy >= target.accuracy - 1e-12)).length;
    rows.push(
      hit
        ? `| ${arm.label} | ${hit.step} | ${Math.round(hit.trajectories)} | ${Math.round(hit.turns)} | ${Math.round(hit.tokens)} | ${alone}/${runs.length} |`
        : `| ${arm.label} | never | – | – | – | ${alone}/${runs.length} |`,
    );
  }
  return rows;
}

function oracleLines(results: ArmResult[]): string[] {
  // The simulator arms by strategy (the trace arm is the paper's in `oracle`, the frozen best in `final-oracle`, uniform roots in `final-roots-oracle`).
  const get = (strategy: string) => results.find((r) => r.arm.env === 'simulator' && r.arm.strategy.name === strategy)?.runs ?? [];
  const warm = (strategy: string, f: (r: RunStats) => number[]) => meanOf(get(strategy).map((r) => meanOf(f(r).slice(WARM))));
  const line = (what: string, f: (r: RunStats) => number[], digits: number) => {
    const [o, t, g] = [warm('oracle', f), warm('trace', f), warm('grpo', f)];
    const share =
      o > g
        ? ` — trace captures ${(((t - g) / (o - g)) * 100).toFixed(0)} % of the oracle's gain over grpo`
        : ' — the oracle does not beat grpo here, so there is no gain to capture';
    return `- ${what} (steps ≥ ${WARM}): grpo ${g.toFixed(digits)}, trace ${t.toFixed(digits)}, oracle ${o.toFixed(digits)}${share}.`;
  };
  return [
    line('effective ratio', (r) => r.ratio, 3),
    line('mixed-anchor yield', (r) => r.anchorYield, 3),
    line('mixed anchors per step (roots and expanded prefixes with mixed leaves)', mixedAnchors, 1),
    line('mixed prompt trees per step', (r) => r.mixed, 1),
  ];
}

/** Contrast per unit of budget: mixed prompt trees and mixed anchors per 100 trajectories spent (all steps). */
function perBudgetTable(results: ArmResult[]): string[] {
  const rows = [
    'Contrast per unit of budget (all steps; the fair measure at equal cost, beside the effective ratio): mixed prompt trees and mixed anchors (roots + expanded prefixes whose leaves disagree) per 100 trajectories spent, mean ± sd over seeds.',
    '',
    '| arm | mixed trees / 100 traj. | mixed anchors / 100 traj. | mixed trees / 10k tokens | effective ratio | trajectories | tokens | ratio of mixed trees / 100 traj. to grpo’s | ratio of mixed trees / 10k tokens to grpo’s |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  // Per generated token as well: at equal tokens a tree arm buys more (cheaper) trajectories, so per trajectory understates its cost.
  const perTokens = (r: ArmResult['runs'][number]) => (1e4 * r.mixed.reduce((a, b) => a + (Number.isFinite(b) ? b : 0), 0)) / Math.max(1, r.total.tokens);
  const grpo = results.find((x) => x.arm.label.endsWith('grpo'));
  const grpoTrees = grpo ? meanOf(grpo.runs.map((r) => per100(r, r.mixed))) : NaN;
  const grpoPerTokens = grpo ? meanOf(grpo.runs.map(perTokens)) : NaN;
  for (const { arm, runs } of results) {
    if (runs.length === 0) continue;
    const trees = spread(runs.map((r) => per100(r, r.mixed)));
    const anchors = spread(runs.map((r) => per100(r, mixedAnchors(r))));
    const tokens = spread(runs.map(perTokens));
    const ratio = (x: number, ref: number) => (Number.isFinite(ref) ? (x / ref).toFixed(2) + '×' : '–');
    rows.push(
      `| ${arm.label} | ${fmt(trees, 2)} | ${fmt(anchors, 2)} | ${fmt(tokens, 2)} | ${fmt(spread(runs.map((r) => meanOf(r.ratio))))} | ${fmt(spread(runs.map((r) => r.total.trajectories)), 0)} | ${fmt(spread(runs.map((r) => r.total.tokens)), 0)} | ${ratio(trees.mean, grpoTrees)} | ${ratio(tokens.mean, grpoPerTokens)} |`,
    );
  }
  return rows;
}

/**
 * Final held-out accuracy, paired by seed, mean and 95 % bootstrap interval: the first arm minus each
 * arm, or with `against`, each arm minus the arm of that label.
 */
function pairedTable(results: ArmResult[], against?: string): string[] {
  const ref = against === undefined ? results[0] : (results.find((r) => r.arm.label === against) ?? results.find((r) => r.arm.strategy.name === against));
  if (!ref || ref.runs.length === 0) return [];
  // Differences are always first minus second of pairedBootstrap.
  const diff = (runs: RunStats[], by: (runs: RunStats[]) => Map<number, number>) =>
    against === undefined ? pairedBootstrap(by(ref.runs), by(runs)) : pairedBootstrap(by(runs), by(ref.runs));
  const finalBySeed = (runs: RunStats[]) => new Map(runs.map((r) => [r.seed, r.evals[r.evals.length - 1]?.accuracy ?? NaN]));
  const meanBySeed = (runs: RunStats[]) => new Map(runs.map((r) => [r.seed, meanOf(r.evals.filter((e) => e.step > 0).map((e) => e.accuracy))]));
  const rows = [
    `Paired differences, ${against === undefined ? `${ref.arm.label} minus each arm` : `each arm minus ${ref.arm.label}`} (same seeds), final held-out accuracy and mean accuracy over the evaluations after step 0: mean [95 % bootstrap interval over seeds, 10,000 resamples] (pairs).`,
    '',
    '| arm | final acc. (mean ± sd) | Δ final acc. | Δ mean acc. (evals after step 0) |',
    '|---|---|---|---|',
  ];
  for (const { arm, runs } of results) {
    if (runs.length === 0) continue;
    const acc = spread(runs.map((r) => r.evals[r.evals.length - 1]?.accuracy ?? NaN));
    if (arm === ref.arm) {
      rows.push(`| ${arm.label} | ${fmt(acc)} | (reference) | (reference) |`);
      continue;
    }
    rows.push(`| ${arm.label} | ${fmt(acc)} | ${fmtPaired(diff(runs, finalBySeed))} | ${fmtPaired(diff(runs, meanBySeed))} |`);
  }
  return rows;
}

/** Trajectories each arm needs to reach grpo's seed-mean final accuracy, and as a share of grpo's. */
function reachGrpoTable(results: ArmResult[]): string[] {
  const grpo = results.find((x) => x.arm.label.endsWith('grpo'));
  if (!grpo || grpo.runs.length === 0) return [];
  const gc = curve(grpo.runs);
  const target = gc[gc.length - 1].accuracy.mean;
  const grpoHit = gc.find((p) => p.accuracy.mean >= target - 1e-12)!;
  const rows = [
    `Trajectories to reach grpo's seed-mean final accuracy ${target.toFixed(3)} (first evaluation whose seed-mean accuracy reaches it; grpo itself: ${Math.round(grpoHit.trajectories)}):`,
    '',
    '| arm | first eval reaching it (step) | trajectories | share of grpo’s | tokens |',
    '|---|---|---|---|---|',
  ];
  for (const { arm, runs } of results) {
    if (runs.length === 0) continue;
    const hit = curve(runs).find((p) => p.accuracy.mean >= target - 1e-12);
    rows.push(
      hit
        ? `| ${arm.label} | ${hit.step} | ${Math.round(hit.trajectories)} | ${(hit.trajectories / grpoHit.trajectories).toFixed(2)} | ${Math.round(hit.tokens)} |`
        : `| ${arm.label} | never | – | – | – |`,
    );
  }
  return rows;
}

/** Question kind by training prompt id, of the world a run trained on (its stored config: env seed, size). */
async function trainKinds(dir: string): Promise<Map<string, string>> {
  const store = RunStore.open(dir, { readonly: true });
  let config;
  try {
    config = storedTrainConfig(store);
  } finally {
    store.close();
  }
  return new Map((await buildEnvironment(config)).train.map((p) => [p.id, questionKind(p)]));
}

/** Where each main arm's bare rollouts went by question kind (steps 10, 13, …, 28 of every seed). */
async function kindTable(results: ArmResult[], o: AnalyseOptions): Promise<string[]> {
  const steps = Array.from({ length: Math.max(0, Math.ceil((o.scale.steps - WARM) / 3)) }, (_, i) => WARM + 3 * i).filter((s) => s < o.scale.steps);
  // Each arm's own world (arms may differ in env seed); the question ids of two worlds do not correspond.
  const kindsByArm = new Map(
    await Promise.all(results.filter((r) => r.runs.length > 0).map(async (r) => [r.arm.label, await trainKinds(r.runs[0]!.dir)] as const)),
  );
  const allKinds = [...new Set([...kindsByArm.values()].flatMap((k) => [...k.values()]))].sort();
  const rows = [
    `Where the bare rollouts went, by question kind (steps ${steps.join(', ')}; all seeds): share of bare rollouts / share of those prompts whose tree is mixed; last column: selected prompts whose bare rollouts all ended after one turn (nothing to expand).`,
    '',
    `| arm | ${allKinds.join(' | ')} | no prefix to expand |`,
    `|---|${allKinds.map(() => '---').join('|')}|---|`,
  ];
  for (const { arm, runs } of results) {
    if (runs.length === 0) continue;
    const total = new Map<string, [number, number, number]>();
    let noPrefix = 0;
    let selected = 0;
    for (const r of runs) {
      const kinds = kindsByArm.get(arm.label)!;
      const use = kindUse(r.dir, steps, (id) => kinds.get(id) ?? '?');
      for (const [k, v] of use.byKind) {
        const t = total.get(k) ?? [0, 0, 0];
        total.set(k, [t[0] + v[0], t[1] + v[1], t[2] + v[2]]);
      }
      noPrefix += use.noPrefix;
      selected += use.selected;
    }
    const bare = [...total.values()].reduce((a, v) => a + v[0], 0);
    const cell = (k: string) => {
      const t = total.get(k);
      return t ? `${((100 * t[0]) / bare).toFixed(0)} % / ${((100 * t[2]) / t[1]).toFixed(0)} %` : '–';
    };
    rows.push(`| ${arm.label} | ${allKinds.map(cell).join(' | ')} | ${((100 * noPrefix) / Math.max(1, selected)).toFixed(0)} % |`);
  }
  return rows;
}

/** Final policies (last checkpoint of every seed) re-evaluated greedily, accuracy and turns by question kind. */
async function finalByKindTable(results: ArmResult[], o: AnalyseOptions): Promise<string[]> {
  const rows: string[] = [];
  let kinds: string[] = [];
  for (const { arm, runs } of results) {
    if (runs.length === 0) continue;
    const total = new Map<string, { n: number; solved: number; turns: number }>();
    const perSeed = new Map<string, number[]>();
    for (const r of runs) {
      for (const [k, v] of await accuracyByKind(r.dir)) {
        const t = total.get(k) ?? { n: 0, solved: 0, turns: 0 };
        total.set(k, { n: t.n + v.n, solved: t.solved + v.solved, turns: t.turns + v.turns });
        perSeed.set(k, [...(perSeed.get(k) ?? []), v.solved / v.n]);
      }
    }
    if (kinds.length === 0) {
      kinds = [...total.keys()].sort();
      const share = kinds.map((k) => `${k} ${total.get(k)!.n / runs.length}`).join(', ');
      rows.push(
        `Final policies (last checkpoint, every seed) on the same held-out questions, by kind (${share} questions): accuracy mean ± sd over seeds / mean turns per answer.`,
        '',
        `| arm | ${kinds.join(' | ')} |`,
        `|---|${kinds.map(() => '---').join('|')}|`,
      );
    }
    const cell = (k: string) => {
      const t = total.get(k);
      return t ? `${fmt(spread(perSeed.get(k)!), 2).split(' [')[0]} / ${(t.turns / t.n).toFixed(2)}` : '–';
    };
    rows.push(`| ${arm.label} | ${kinds.map(cell).join(' | ')} |`);
    o.log(`by-kind accuracy of ${arm.label} done`);
  }
  return rows;
}

function band(results: ArmResult[], y: (r: RunStats) => Array<{ x: number; y: number }>): BandRow[] {
  const rows: BandRow[] = [];
  for (const { arm, runs } of results) {
    const byX = new Map<number, number[]>();
    const xs = new Map<number, number[]>();
    for (const r of runs) {
      y(r).forEach((p, i) => {
        byX.set(i, [...(byX.get(i) ?? []), p.y]);
        xs.set(i, [...(xs.get(i) ?? []), p.x]);
      });
    }
    for (const [i, ys] of byX) {
      const s: Spread = spread(ys);
      rows.push({ arm: arm.label, x: meanOf(xs.get(i)!), mean: s.mean, lo: s.min, hi: s.max });
    }
  }
  return rows;
}

async function writePlots(experiment: ExperimentName, report: Report, simulated: boolean, results: ArmResult[], dir: string): Promise<void> {
  const perStep = (r: RunStats) => r.ratio.map((y, x) => ({ x, y }));
  const where = simulated ? 'simulator' : 'world';
  if (report.contrast) {
    await writeSvg(
      dir,
      `${experiment}-effective-ratio`,
      bandChart(`effective ratio per step (${where}; seed mean, min–max band)`, band(results, perStep), 'step', 'effective ratio', [0, 1]),
    );
    await writeSvg(
      dir,
      `${experiment}-mixed-trees`,
      bandChart(
        `mixed prompt trees per step (${where})`,
        band(results, (r) => r.mixed.map((y, x) => ({ x, y }))),
        'step',
        'mixed trees',
      ),
    );
  }
  if (report.curves) await writeCurves(experiment, 'greedy', results, dir);
  if (report.bars) {
    const rows: BarRow[] = [];
    for (const { arm, runs } of results) {
      if (runs.length === 0) continue;
      const n = armNumbers(runs);
      for (const [metric, s] of [
        ['effective ratio (steps ≥ 10)', n.ratioWarm],
        ['mixed trees / step (≥ 10)', n.mixedWarm],
        ['final test accuracy', n.finalAccuracy],
      ] as const) {
        rows.push({ arm: arm.label, metric, mean: s.mean, lo: s.mean - s.sd, hi: s.mean + s.sd });
      }
    }
    await writeSvg(
      dir,
      'ablation',
      barChart(
        'ablation (world, B = 192; seed mean ± sd)',
        rows,
        results.map((r) => r.arm.label),
      ),
    );
  }
}

async function writeCurves(name: string, decoding: 'greedy' | 'sampled', results: ArmResult[], dir: string): Promise<void> {
  await writeSvg(
    dir,
    `${name}-accuracy-vs-trajectories`,
    bandChart(
      `held-out ${decoding} accuracy vs trajectories spent (seed mean, min–max)`,
      band(results, (r) => r.evals.map((e) => ({ x: e.trajectories, y: e.accuracy }))),
      'cumulative trajectories',
      'test accuracy',
    ),
  );
  await writeSvg(
    dir,
    `${name}-accuracy-vs-tokens`,
    bandChart(
      `held-out ${decoding} accuracy vs generated tokens`,
      band(results, (r) => r.evals.map((e) => ({ x: e.tokens, y: e.accuracy }))),
      'cumulative generated tokens',
      'test accuracy',
    ),
  );
}

/** One HTML report per experiment (writeReport groups runs by their arm label, config.arm). */
async function writeReports(experiment: ExperimentName, results: ArmResult[], o: AnalyseOptions): Promise<void> {
  const runs = results.flatMap((r) => r.runs.map((x) => x.dir)).filter((dir) => dir !== '');
  const fromRecords = results.reduce((n, r) => n + r.runs.filter((x) => x.dir === '').length, 0);
  if (fromRecords > 0) o.log(`${experiment}: ${fromRecords} run(s) read from records (no run folder here) are not in the HTML report`);
  if (runs.length === 0) return;
  const res = await writeReport({ runs, out: join(o.out, `${experiment}.html`), maxPromptsPerStep: 8 });
  o.log(`report ${res.out} (${Math.round(res.bytes / 1024)} KB)`);
}
