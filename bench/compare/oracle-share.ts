/**
 * The share of the oracle's gain over grpo an arm captures (issue 34 §1), on final accuracy paired by
 * seed: share = (mean arm − mean grpo) / (mean oracle − mean grpo) over the seeds all three share,
 * with a 95 % percentile bootstrap interval (seeds resampled together, the same seeded stream as
 * pairedBootstrap). Meaningful only where the oracle's gain is clearly above 0.
 */
import type { RunStats } from './load.ts';
import { resampleStream } from './stats.ts';

export interface ShareInput {
  label: string;
  /** Final accuracy by seed. */
  bySeed: ReadonlyMap<number, number>;
}

export function oracleShare(
  arm: ShareInput['bySeed'],
  grpo: ShareInput['bySeed'],
  oracle: ShareInput['bySeed'],
  resamples = 10_000,
  seed = 1,
): { share: number; lo: number; hi: number; n: number } {
  const seeds = [...arm.keys()].filter((s) => grpo.has(s) && oracle.has(s) && [arm, grpo, oracle].every((m) => Number.isFinite(m.get(s)!)));
  const n = seeds.length;
  if (n === 0) return { share: NaN, lo: NaN, hi: NaN, n };
  const ratio = (idx: readonly number[]) => {
    let a = 0;
    let o = 0;
    for (const i of idx) {
      const s = seeds[i]!;
      a += arm.get(s)! - grpo.get(s)!;
      o += oracle.get(s)! - grpo.get(s)!;
    }
    return a / o;
  };
  const next = resampleStream(seed);
  const shares = new Float64Array(resamples);
  for (let r = 0; r < resamples; r++) shares[r] = ratio(Array.from({ length: n }, () => Math.floor(next() * n)));
  shares.sort();
  return { share: ratio(seeds.map((_, i) => i)), lo: shares[Math.floor(0.025 * resamples)]!, hi: shares[Math.ceil(0.975 * resamples) - 1]!, n };
}

/** The markdown table: each arm's share of the oracle's gain (the oracle arm is the one of strategy `oracle`). */
export function oracleShareTable(results: ReadonlyArray<{ arm: { label: string; strategy: Record<string, unknown> }; runs: RunStats[] }>): string[] {
  const final = (runs: RunStats[]) => new Map(runs.map((r) => [r.seed, r.evals[r.evals.length - 1]?.accuracy ?? NaN]));
  const grpo = results.find((r) => r.arm.strategy.name === 'grpo');
  const oracle = results.find((r) => r.arm.strategy.name === 'oracle');
  if (!grpo || !oracle || grpo.runs.length === 0 || oracle.runs.length === 0) return [];
  const rows = [
    `Share of the oracle's gain over grpo (${oracle.arm.label} − ${grpo.arm.label}), final accuracy paired by seed: (arm − grpo) / (oracle − grpo), 95 % bootstrap interval over seeds (10,000 resamples) (seeds).`,
    '',
    '| arm | share of the oracle’s gain |',
    '|---|---|',
  ];
  for (const r of results) {
    if (r === grpo || r === oracle || r.runs.length === 0) continue;
    const s = oracleShare(final(r.runs), final(grpo.runs), final(oracle.runs));
    rows.push(`| ${r.arm.label} | ${s.n ? `${(100 * s.share).toFixed(0)} % [${(100 * s.lo).toFixed(0)}, ${(100 * s.hi).toFixed(0)}] (${s.n})` : '–'} |`);
  }
  return rows;
}
