/**
 * Paired differences from per-run records (<out>/records/<label>-s<seed>.json, written by analyse), for
 * a comparison whose seeds ran on different machines: run folders are not committed and a machine is
 * not kept, but the records are. Same statistics as analyse (stats.ts): each arm minus the reference,
 * same seeds, 95 % bootstrap interval over seeds.
 *
 * Run:  npx tsx bench/compare/pool.ts --records bench/compare/out-tinylm-s/records --arms trace-rec,grpo --reference grpo [--out FILE]
 */
import { readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { mixedAnchors, per100, readRecord, type EvalPoint, type RunRecord } from './load.ts';
import { fmt, fmtPaired, meanOf, pairedBootstrap, spread } from './stats.ts';

function fail(message: string): never {
  process.stderr.write(`bench/compare/pool.ts: ${message}\n`);
  process.exit(2);
}
const { values } = parseArgs({ options: { records: { type: 'string' }, arms: { type: 'string' }, reference: { type: 'string' }, out: { type: 'string' } } });
const need = (name: 'records' | 'arms' | 'reference') => values[name] ?? fail(`--${name} is required (see the usage at the top of bench/compare/pool.ts)`);

const dir = resolve(need('records'));
const armLabels = need('arms')
  .split(',')
  .map((s) => s.trim());
const reference = need('reference');
if (!armLabels.includes(reference)) fail(`--reference ${reference} is not one of --arms ${armLabels.join(',')}`);

const records = readdirSync(dir)
  .filter((f) => f.endsWith('.json'))
  .map((f) => readRecord(join(dir, f)))
  .filter((r) => armLabels.includes(r.label));
const byArm = new Map(armLabels.map((label) => [label, records.filter((r) => r.label === label).sort((a, b) => a.seed - b.seed)]));
for (const [label, rs] of byArm) if (rs.length === 0) fail(`no record of arm "${label}" in ${dir}`);

const lines: string[] = [
  `Pooled from ${records.length} records in ${dir.replace(process.cwd() + '/', '')}; each arm minus ${reference}, same seeds: mean [95 % bootstrap interval over seeds, 10,000 resamples] (pairs).`,
  '',
];
const bySource = new Map<string, string[]>();
for (const r of records) if (r.source) bySource.set(r.source, [...(bySource.get(r.source) ?? []), `${r.label} s${r.seed}`]);
for (const [source, runs] of bySource) lines.push(`- ${runs.join(', ')}: ${source}`);
if (bySource.size) lines.push('');

for (const [reading, evalsOf] of [
  ['greedy', (r: RunRecord) => r.evals],
  ['sampled', (r: RunRecord) => r.sampledEvals],
] as const) {
  const final = (rs: RunRecord[]) => new Map(rs.filter((r) => evalsOf(r).length).map((r) => [r.seed, evalsOf(r).at(-1)!.accuracy]));
  // The mean over the evaluations after step 0 compares like with like only where a record has them all.
  const steps = [...new Set(records.flatMap((r) => evalsOf(r).map((e) => e.step)))].sort((a, b) => a - b);
  const allSteps = steps.filter((s) => s > 0);
  const complete = (es: EvalPoint[]) => allSteps.every((s) => es.some((e) => e.step === s));
  const meanAfter0 = (rs: RunRecord[]) =>
    new Map(
      rs
        .filter((r) => complete(evalsOf(r)))
        .map((r) => [
          r.seed,
          meanOf(
            evalsOf(r)
              .filter((e) => e.step > 0)
              .map((e) => e.accuracy),
          ),
        ]),
    );
  const ref = byArm.get(reference)!;
  if (final(ref).size === 0) continue;
  lines.push(`**${reading} held-out success** (evaluations after steps ${steps.join(', ')}):`, '');
  lines.push('| arm | seeds | final (mean ± sd [min–max]) | Δ final | Δ mean over evals after step 0 |', '|---|---|---|---|---|');
  for (const [label, rs] of byArm) {
    const f = final(rs);
    const cells =
      label === reference
        ? ['(reference)', '(reference)']
        : [fmtPaired(pairedBootstrap(f, final(ref))), fmtPaired(pairedBootstrap(meanAfter0(rs), meanAfter0(ref)))];
    lines.push(`| ${label} | ${[...f.keys()].join(', ')} | ${fmt(spread([...f.values()]))} | ${cells.join(' | ')} |`);
  }
  lines.push('');
}

// Contrast per unit of budget needs the per-step arrays, which only records written from run folders hold.
const withSteps = [...byArm].map(([label, rs]) => [label, rs.filter((r) => r.ratio.length > 0)] as const).filter(([, rs]) => rs.length > 0);
if (withSteps.length) {
  lines.push('Contrast per unit of budget (records with per-step metrics only): mixed prompt trees and mixed anchors per 100 trajectories, tokens.', '');
  lines.push('| arm | seeds | mixed trees / 100 traj. | mixed anchors / 100 traj. | tokens |', '|---|---|---|---|---|');
  for (const [label, rs] of withSteps) {
    lines.push(
      `| ${label} | ${rs.map((r) => r.seed).join(', ')} | ${fmt(spread(rs.map((r) => per100(r, r.mixed))), 2)} | ${fmt(spread(rs.map((r) => per100(r, mixedAnchors(r)))), 2)} | ${fmt(spread(rs.map((r) => r.total.tokens)), 0)} |`,
    );
  }
}

const text = lines.join('\n') + '\n';
process.stdout.write(text);
if (values.out) writeFileSync(resolve(values.out), text);
