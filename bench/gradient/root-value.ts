/**
 * Which root value tracks signal that generalises (issue 34 §1)? Root allocation spends rollouts on the
 * prompts a value ranks high; P(mixed) ranks a coin-flip question as high as one whose contrast the
 * policy can learn. On the gradient bench's checkpoint this script gives every prompt of the two fixed
 * sets (same and disjoint, 2 × `prompts`) its reference gradient g_i (`rollouts` rollouts) and reads
 *   - its generalising signal t_i = ⟨g_i, ∇J_other⟩ / |∇J_other|, the length of its step along the other
 *     set's gradient (same-set prompts against the disjoint set's ∇J and vice versa);
 *   - its own signal ⟨g_i⁽¹⁾, g_i⁽²⁾⟩ from the two halves of its rollouts (an unbiased |∇J_i|²);
 * then, for each candidate value computed from the prompt's true success rate p_i (so prediction error
 * plays no part), the Spearman correlation with t_i and the share of Σ t_i that its top half holds, with
 * 95 % bootstrap intervals over prompts. A value "kind-weighted" multiplies P(mixed) by its question
 * kind's generalising signal per unit P(mixed), fitted on the other set only (cross-fitted, so no prompt's
 * own t_i enters its value): what a root value that knows which kinds teach could reach.
 *
 *   npx tsx bench/gradient/root-value.ts [--prompts 64] [--rollouts 1024] [--reference-cache file] [--resamples 2000] [--json out.json]
 *
 * Measured (128 + 128 prompts, 1,024 rollouts): bench/gradient/results/root-value.md, read in
 * docs/experiments/2026-12-02-root-evidence-and-value.md.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { mixedChance } from '../../src/allocate/solvers/mixed-value.ts';
import { resampleStream } from '../compare/stats.ts';
import { gradientCheckpoint } from './checkpoint.ts';
import { interval } from './cosine-bootstrap.ts';
import type { PromptGradient } from './update-direction.ts';
import { pearson, spearman, topHalfShare } from './rank-stats.ts';
import { dot, sum } from './sparse.ts';

const { values } = parseArgs({
  options: {
    prompts: { type: 'string', default: '64' },
    rollouts: { type: 'string', default: '1024' },
    resamples: { type: 'string', default: '2000' },
    json: { type: 'string' },
    'reference-cache': { type: 'string' },
  },
});
const started = Date.now();
const log = (msg: string) => console.error(`[${((Date.now() - started) / 1000).toFixed(0)} s] ${msg}`);
const P = Number(values.prompts);
const { same, disjoint, refSame, refOther } = await gradientCheckpoint({
  prompts: P,
  rollouts: Number(values.rollouts),
  budget: 192,
  cache: values['reference-cache'],
  log,
});

interface PromptRow {
  id: string;
  kind: string;
  p: number;
  /** t_i: signal along the other set's ∇J. */
  general: number;
  /** The same from each half of the prompt's rollouts (the split-half reliability of t_i). */
  halves: [number, number];
  /** ⟨g⁽¹⁾, g⁽²⁾⟩: the prompt's own squared signal. */
  own: number;
  /** Share of its outcome variance its actions before the last turn explain (path-share.ts; NaN when it has none). */
  path: number;
  set: 'same' | 'disjoint';
}

function rowsOf(set: 'same' | 'disjoint', prompts: typeof same, ref: typeof refSame, other: typeof refSame): PromptRow[] {
  const target = sum(other.full.map((g) => g.total));
  const norm = Math.sqrt(dot(target, target));
  const along = (g: PromptGradient) => dot(g.total, target) / norm;
  return ref.full.map((g, i) => ({
    id: g.promptId,
    kind: String((prompts.find((p) => p.id === g.promptId)?.meta?.world as { kind?: string } | undefined)?.kind ?? 'unknown'),
    p: g.success,
    general: along(g),
    halves: [along(ref.halves[0][i]!), along(ref.halves[1][i]!)],
    own: dot(ref.halves[0][i]!.total, ref.halves[1][i]!.total),
    path: g.pathShare,
    set,
  }));
}
const rows = [...rowsOf('same', same, refSame, refOther), ...rowsOf('disjoint', disjoint, refOther, refSame)];

/** Generalising signal per unit P(mixed, 3) of each kind, from the prompts of one set. */
function kindWeights(from: readonly PromptRow[]): Map<string, number> {
  const acc = new Map<string, { t: number; m: number }>();
  for (const r of from) {
    const a = acc.get(r.kind) ?? { t: 0, m: 0 };
    a.t += r.general;
    a.m += mixedChance(r.p, 3);
    acc.set(r.kind, a);
  }
  return new Map([...acc].map(([k, a]) => [k, a.m > 0 ? Math.max(0, a.t / a.m) : 0]));
}
const weightsFrom = { same: kindWeights(rows.filter((r) => r.set === 'disjoint')), disjoint: kindWeights(rows.filter((r) => r.set === 'same')) };

const VALUES: Array<{ name: string; value: (r: PromptRow) => number }> = [
  { name: 'P(mixed), m = 3', value: (r) => mixedChance(r.p, 3) },
  { name: 'P(mixed), m = 8', value: (r) => mixedChance(r.p, 8) },
  { name: 'p(1 − p)', value: (r) => r.p * (1 - r.p) },
  { name: 'p(1 − p)² (knapsack)', value: (r) => r.p * (1 - r.p) ** 2 },
  { name: '1 − p (room to improve)', value: (r) => 1 - r.p },
  { name: 'own signal |∇J_i|² (oracle)', value: (r) => r.own },
  { name: 'P(mixed, 3) × path share (learnable contrast)', value: (r) => mixedChance(r.p, 3) * (Number.isFinite(r.path) ? r.path : 0) },
  { name: 'P(mixed, 3) × kind weight (cross-fitted)', value: (r) => mixedChance(r.p, 3) * (weightsFrom[r.set].get(r.kind) ?? 0) },
];

// One set of prompt draws (index lists) for every statistic, so differences between values are paired.
const next = resampleStream(7);
const draws = Array.from({ length: Number(values.resamples) }, () => Array.from({ length: rows.length }, () => Math.floor(next() * rows.length)));
const everyPrompt = rows.map((_, i) => i);
/** The statistic on every prompt, and its 95 % percentile interval over the prompt draws. */
const bootstrap = (stat: (idx: readonly number[]) => number) => interval(Float64Array.from([everyPrompt, ...draws], stat));
const f3 = (x: number) => (Number.isFinite(x) ? x.toFixed(3) : '–');
const ci = (x: { point: number; lo: number; hi: number }) => `${f3(x.point)} [${f3(x.lo)}, ${f3(x.hi)}]`;

const t = rows.map((r) => r.general);
const reliability = pearson(
  rows.map((r) => r.halves[0]),
  rows.map((r) => r.halves[1]),
);
const mixed = rows.map(VALUES[0]!.value);
const rho = (v: readonly number[], idx: readonly number[]) =>
  spearman(
    idx.map((i) => v[i]!),
    idx.map((i) => t[i]!),
  );
const table = VALUES.map(({ name, value }) => {
  const v = rows.map(value);
  return {
    name,
    spearman: bootstrap((idx) => rho(v, idx)),
    vsMixed: bootstrap((idx) => rho(v, idx) - rho(mixed, idx)),
    topHalf: bootstrap((idx) =>
      topHalfShare(
        idx.map((i) => v[i]!),
        idx.map((i) => t[i]!),
      ),
    ),
  };
});
const kinds = [...new Set(rows.map((r) => r.kind))].sort();
const byKind = kinds.map((kind) => {
  const rs = rows.filter((r) => r.kind === kind);
  const m = (f: (r: PromptRow) => number) => rs.reduce((s, r) => s + f(r), 0) / rs.length;
  const withPath = rs.filter((r) => Number.isFinite(r.path));
  return {
    kind,
    n: rs.length,
    p: m((r) => r.p),
    mixed: m((r) => mixedChance(r.p, 3)),
    general: m((r) => r.general),
    own: m((r) => r.own),
    path: withPath.reduce((s, r) => s + r.path, 0) / withPath.length,
  };
});

const out: string[] = [];
out.push(
  `Checkpoint: world (env seed 7) BC warm start; ${rows.length} prompts (${P} same + ${P} disjoint), ${values.rollouts} reference rollouts each; J = ${f3(refSame.success)} / ${f3(refOther.success)}.`,
);
out.push(`Split-half reliability of a prompt's generalising signal t_i (Pearson, halves of its rollouts): ${f3(reliability)}.`);
out.push('');
out.push('| root value (from the true p) | Spearman with t_i | Δ Spearman vs P(mixed, 3), paired | share of Σ t_i in its top half |');
out.push('|---|---|---|---|');
for (const r of table) out.push(`| ${r.name} | ${ci(r.spearman)} | ${r === table[0] ? '' : ci(r.vsMixed)} | ${ci(r.topHalf)} |`);
out.push('');
out.push(
  '| question kind | prompts | mean p | mean P(mixed, 3) | mean t_i (generalising) | t_i per unit P(mixed) | mean own signal | mean path share (mixed prompts) |',
);
out.push('|---|---|---|---|---|---|---|---|');
for (const k of byKind)
  out.push(`| ${k.kind} | ${k.n} | ${f3(k.p)} | ${f3(k.mixed)} | ${f3(k.general)} | ${f3(k.general / k.mixed)} | ${f3(k.own)} | ${f3(k.path)} |`);
console.log(out.join('\n'));
log('done');
if (values.json)
  writeFileSync(
    values.json,
    JSON.stringify({ prompts: rows.length, rollouts: Number(values.rollouts), reliability, values: table, byKind, rows }, null, 2) + '\n',
  );
