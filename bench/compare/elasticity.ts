/**
 * Budget elasticity: what a point of held-out success is worth in grpo's compute. grpo ran at ½×, 1× and
 * 2× a final's tokens a step (experiments elasticity-world / elasticity-late, development seeds); the
 * slope per doubling, b = (acc(2×) − acc(½×)) / 2, turns a final's paired Δ (best trace − grpo, its own
 * fresh seeds) into an effective compute multiplier c = 2^(Δ / b): the trace arm was worth what grpo
 * would have needed c× the tokens to reach. The interval resamples both sets of seeds independently
 * (percentile bootstrap); when the slope's resamples reach 0 the multiplier is unbounded and is said so.
 *
 * Run:  npx tsx bench/compare/elasticity.ts [--out bench/compare/out-dev-elasticity]
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { resampleStream } from './stats.ts';

interface RecordFile {
  label: string;
  seed: number;
  finished: boolean;
  evals: { accuracy: number }[];
}

/** Final greedy held-out success per seed of one arm. */
export function finals(dir: string, label: string): Map<number, number> {
  const out = new Map<number, number>();
  if (!existsSync(dir)) return out;
  for (const f of readdirSync(dir)) {
    if (!f.startsWith(`${label}-s`) || !f.endsWith('.json')) continue;
    const r = JSON.parse(readFileSync(join(dir, f), 'utf8')) as RecordFile;
    if (r.label === label && r.finished && r.evals.length > 0) out.set(r.seed, r.evals[r.evals.length - 1]!.accuracy);
  }
  return out;
}

/** Paired differences a − b over the seeds both hold. */
export function paired(a: ReadonlyMap<number, number>, b: ReadonlyMap<number, number>): number[] {
  return [...a].filter(([s]) => b.has(s)).map(([s, x]) => x - b.get(s)!);
}

export interface Multiplier {
  /** Slope per doubling of grpo's tokens, in success (0–1), with its 95 % interval. */
  slope: { mean: number; lo: number; hi: number; n: number };
  delta: { mean: number; lo: number; hi: number; n: number };
  /** c = 2^(Δ / b) and its interval; lo / hi are null where the slope's resamples reach 0 (unbounded). */
  c: { mean: number; lo: number | null; hi: number | null };
}

/**
 * c = 2^(Δ / b) with b from per-seed slopes (half the paired 2× − ½× difference) and Δ from a final's
 * paired differences; the interval from `resamples` joint resamples of both seed sets.
 */
export function multiplier(slopes: readonly number[], deltas: readonly number[], resamples = 10_000, seed = 1): Multiplier {
  const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const next = resampleStream(seed);
  const draw = (xs: readonly number[]) => {
    let s = 0;
    for (let i = 0; i < xs.length; i++) s += xs[Math.floor(next() * xs.length)]!;
    return s / xs.length;
  };
  const bs = new Float64Array(resamples);
  const ds = new Float64Array(resamples);
  const cs = new Float64Array(resamples);
  let flat = 0;
  for (let r = 0; r < resamples; r++) {
    bs[r] = draw(slopes);
    ds[r] = draw(deltas);
    if (bs[r]! <= 0) flat++;
    cs[r] = bs[r]! > 0 ? 2 ** (ds[r]! / bs[r]!) : ds[r]! >= 0 ? Infinity : 0;
  }
  const pct = (xs: Float64Array) => {
    const s = Float64Array.from(xs).sort();
    return { lo: s[Math.floor(0.025 * resamples)]!, hi: s[Math.ceil(0.975 * resamples) - 1]! };
  };
  const b = mean(slopes);
  const d = mean(deltas);
  const ci = pct(cs);
  const bounded = flat / resamples <= 0.025;
  return {
    slope: { mean: b, ...pct(bs), n: slopes.length },
    delta: { mean: d, ...pct(ds), n: deltas.length },
    c: { mean: b > 0 ? 2 ** (d / b) : NaN, lo: bounded && Number.isFinite(ci.lo) ? ci.lo : null, hi: bounded && Number.isFinite(ci.hi) ? ci.hi : null },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const here = fileURLToPath(new URL('.', import.meta.url));
  const i = process.argv.indexOf('--out');
  const out = i > 0 ? process.argv[i + 1]! : join(here, 'out-dev-elasticity');
  const rec = (folder: string) => join(here, folder, 'records');
  // [name, folder, trace arm, grpo arm]. R3 world's grpo (G = 3 on 64 of 256 candidates) draws 64 random
  // prompts a step at G = 3, as grpo at pool 64 does, so the world's slope reads its Δ too.
  const settings = [
    {
      world: 'late',
      el: 'ell',
      finals: [
        ['final-late-20 (1010–1029)', 'out-final-late-20', 'f20-trace-best', 'f20-grpo'],
        ['final-late (1000–1004)', 'out-final-late', 'fl-trace-best', 'fl-grpo'],
      ],
    },
    {
      world: 'world',
      el: 'elw',
      finals: [
        ['R2 world (1005–1009)', 'out-final-r2', 'r2w-trace-best', 'r2w-grpo'],
        ['R3 world, guarded G = 3 (1030–1069)', 'out-final-r3-world', 'r3w-guarded-g3', 'r3w-grpo-g3'],
        ['R4 world, defensive (1070–1109)', 'out-final-r4-defensive', 'r4d-defensive-sys', 'r4d-grpo-g3'],
      ],
    },
  ] as const;
  console.log('| world | final | grpo slope per doubling (points) | Δ arm − grpo (points) | worth c× grpo’s compute |');
  console.log('|---|---|---|---|---|');
  for (const s of settings) {
    const half = finals(join(out, 'records'), `${s.el}-grpo-x0.5`);
    const double = finals(join(out, 'records'), `${s.el}-grpo-x2`);
    const slopes = paired(double, half).map((d) => d / 2);
    if (slopes.length === 0) continue;
    for (const [name, folder, trace, grpo] of s.finals) {
      const deltas = paired(finals(rec(folder), trace), finals(rec(folder), grpo));
      if (deltas.length === 0) continue;
      const m = multiplier(slopes, deltas);
      const p = (x: number) => (100 * x).toFixed(1);
      const c =
        m.c.lo === null || m.c.hi === null
          ? `${m.c.mean.toFixed(2)}× [unbounded: the slope's interval reaches 0]`
          : `${m.c.mean.toFixed(2)}× [${m.c.lo.toFixed(2)}, ${m.c.hi.toFixed(2)}]`;
      console.log(
        `| ${s.world} | ${name} | ${p(m.slope.mean)} [${p(m.slope.lo)}, ${p(m.slope.hi)}] (${m.slope.n} seeds) | ${p(m.delta.mean)} [${p(m.delta.lo)}, ${p(m.delta.hi)}] (${m.delta.n}) | ${c} |`,
      );
    }
  }
}
