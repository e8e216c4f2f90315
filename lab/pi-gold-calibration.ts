/**
 * Development diagnostic for π_gold's one open choice (raw product or per-turn geometric mean): on one
 * development seed's late world and its warm-started policy, how well each predicts the prompt's
 * success under the current policy, measured by k fresh sampled rollouts of every candidate
 * (Brier score of v against each outcome, and the share of prompts that are mixed in those rollouts
 * among the top of each ranking by closeness to ½, what the root solver selects on). Also the teacher-
 * forced tokens a step's 256 gold trajectories read, which sizes the charged arm.
 * Usage: node --import tsx lab/pi-gold-calibration.ts [seed] [k] [pool] [steps of grpo training first]
 */
import { parseTrainConfig, buildComponents, drawPool } from '../src/train/index.ts';
import { probeOutcomes } from '../src/train/probe.ts';
import { createRng } from '../src/util/rng.ts';
import { arms, runConfig, DEFAULT_SCALE } from '../bench/compare/experiments.ts';
import { goldTrace, goldValue, isGoldReadable, type GoldTrace } from './pi-gold.ts';

const [seed = 0, k = 8, pool = 256] = process.argv.slice(2).map(Number);
const arm = arms('select-late').find((a) => a.label === 'sl-grpo-g3')!;
const scale = { ...DEFAULT_SCALE, steps: 30, evalEvery: 15, evalQuestions: 500, evalSamples: 2, envQuestions: 2500 };
const config = parseTrainConfig(runConfig(arm, seed, scale));
const parts = await buildComponents(config);
const run = { env: parts.env, policy: parts.policy };
if (!isGoldReadable(run)) throw new Error('needs the world and the embedded policy');
const prompts = drawPool(parts.train, pool, 0, seed);
const t0 = performance.now();
const traces: GoldTrace[] = [];
for (const p of prompts) traces.push(await goldTrace(run.env, run.policy, p));
const ms = performance.now() - t0;
const probe = await probeOutcomes({
  prompts,
  env: parts.env,
  policy: parts.policy,
  samples: k,
  rng: createRng(seed).fork('calibration'),
  settings: config.engine,
});
const rows = prompts.map((p, i) => ({ trace: traces[i]!, o: probe.outcomes.get(p.id) ?? { successes: 0, trials: 0 } }));
const report: Record<string, unknown> = {
  seed,
  k,
  pool,
  gold_ms: Math.round(ms),
  prefill_tokens: traces.reduce((s, t) => s + t.tokens, 0),
  probe_tokens: probe.tokens,
  unreachable: traces.filter((t) => t.prob === 0).length,
  success_rate: rows.reduce((s, r) => s + r.o.successes, 0) / rows.reduce((s, r) => s + r.o.trials, 0),
  mixed_share: rows.filter((r) => r.o.successes > 0 && r.o.successes < r.o.trials).length / rows.length,
};
for (const score of ['product', 'geomean'] as const) {
  const v = rows.map((r) => goldValue(r.trace, score));
  let brier = 0;
  let n = 0;
  rows.forEach((r, i) => {
    brier += r.o.successes * (1 - v[i]!) ** 2 + (r.o.trials - r.o.successes) * v[i]! ** 2;
    n += r.o.trials;
  });
  // The quarter of prompts closest to ½: the ones the solver favours.
  const order = rows.map((_, i) => i).sort((a, b) => Math.abs(v[a]! - 0.5) - Math.abs(v[b]! - 0.5));
  const top = order.slice(0, Math.floor(rows.length / 4));
  const mixed = top.filter((i) => rows[i]!.o.successes > 0 && rows[i]!.o.successes < rows[i]!.o.trials).length / top.length;
  const meanV = v.reduce((a, b) => a + b, 0) / v.length;
  report[score] = { brier: +(brier / n).toFixed(4), mean_v: +meanV.toFixed(3), top_quarter_mixed: +mixed.toFixed(3) };
}
console.log(JSON.stringify(report));
