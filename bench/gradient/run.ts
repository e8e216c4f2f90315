/**
 * Gradient signal per unit cost (issue 33 §3): for one fixed checkpoint (the world's behaviour-cloning
 * warm start, what every main-scale run starts RL from) and one fixed prompt set, how well does each
 * arm's one-step update direction — per estimator, on the same trees — point along the gradient of
 * expected success? The reference ∇J comes from many independent rollouts of the same prompts
 * (reference.ts) and of a disjoint set of training prompts (what generalises). Seeds vary the arms'
 * rollouts only; every estimator of an arm reads the same trees. Cosines are means over seeds with 95 %
 * bootstrap intervals over seeds (bench/compare's pairedBootstrap; paired for the difference with
 * trace-local), and the difference also with a 95 % percentile interval over prompts (the same prompt
 * draws for every arm, estimator and seed). No prompt interval is given for a cosine itself: a draw
 * that repeats prompts sums fewer distinct ones, so its noise is larger and its cosine lower (the
 * percentile interval sits almost wholly below the estimate). Spend is reported in trajectories,
 * turns and tokens; a per-depth table shows where the reference gradient lies and how each estimator
 * points there.
 *
 *   nice -n 10 npx tsx bench/gradient/run.ts [--prompts 64] [--rollouts 1024] [--seeds 0-4] [--budget 192] [--resamples 1000] [--reference-cache file.json] [--json out.json]
 *                                            [--arms label,label] [--predictor-warmup K]
 *
 * The predictor answers its prior for every prefix until it has trained once, so at the checkpoint
 * every prefix rule that reads Ṽ breaks ties the same way (the flip rule and outcome-blind branching
 * pick identical prefixes). `--predictor-warmup K` first trains it on K steps of grpo's trees on the
 * same prompts, the policy held at the checkpoint, as a run's predictor would have after K steps.
 *
 * Development seeds only (0–4): the bench is the development measure for estimators and allocation.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { strategyFromConfig } from '../../src/allocate/index.ts';
import { createEstimator } from '../../src/advantage/index.ts';
import { evaluateThenTrain, samplesFromTrees } from '../../src/predict/index.ts';
import { collect, initialState, parseTrainConfig } from '../../src/train/index.ts';
import { ESTIMATORS, GRADIENT_ARMS } from './arms.ts';
import { aligned, gram, interval, ResampledReference, resampleWeights } from './cosine-bootstrap.ts';
import { gradientCheckpoint } from './checkpoint.ts';
import { pairedBootstrap } from '../compare/stats.ts';
import { cosine, dot, sum, type SparseVec } from './sparse.ts';
import { updateDirection } from './update-direction.ts';
import type { SharedTurns } from '../../src/train/policy-samples.ts';

const { values } = parseArgs({
  options: {
    prompts: { type: 'string', default: '64' },
    rollouts: { type: 'string', default: '1024' },
    seeds: { type: 'string', default: '0-4' },
    budget: { type: 'string', default: '192' },
    resamples: { type: 'string', default: '1000' },
    json: { type: 'string' },
    'reference-cache': { type: 'string' },
    arms: { type: 'string' },
    'predictor-warmup': { type: 'string', default: '0' },
  },
});
const P = Number(values.prompts);
const ROLLOUTS = Number(values.rollouts);
const B = Number(values.budget);
const [s0, s1] = values.seeds!.split('-').map(Number);
const SEEDS = Array.from({ length: (s1 ?? s0!) - s0! + 1 }, (_, i) => s0! + i);
if (SEEDS.some((s) => s >= 1000)) throw new Error('seeds ≥ 1000 are reserved for pre-registered finals; the gradient bench develops on 0–4');

const started = Date.now();
const log = (msg: string) => console.error(`[${((Date.now() - started) / 1000).toFixed(0)} s] ${msg}`);

const { base, parts, maxDepth, same, disjoint, grads, refSame, refOther } = await gradientCheckpoint({
  prompts: P,
  rollouts: ROLLOUTS,
  budget: B,
  cache: values['reference-cache'],
  log,
});
const promptsById = new Map([...same, ...disjoint].map((p) => [p.id, p]));

const R = Number(values.resamples);
const wSame = resampleWeights(P, R, 1);
const wOther = resampleWeights(P, R, 2);
const ids = same.map((p) => p.id);
const refVecs = refSame.full.map((g) => g.total);
const sameRef = new ResampledReference(refVecs, wSame);
const otherRef = new ResampledReference(
  refOther.full.map((g) => g.total),
  wOther,
);
const refTotal = sum(refVecs);
const refByDepth = Array.from({ length: maxDepth }, (_, d) => sum(refSame.full.map((g) => g.byDepth[d]!)));

interface Row {
  arm: string;
  estimator: string;
  /** Per seed: cosine draws over prompts (draw 0 = every prompt once). */
  same: Float64Array[];
  other: Float64Array[];
  byDepth: number[];
}
const rows: Row[] = [];
const spend: Record<string, { trajectories: number[]; turns: number[]; tokens: number[] }> = {};

/** One collect step of `strategy` on the fixed prompts at the checkpoint (the policy is never updated here). */
async function collectOnce(seed: number, strategy: Record<string, unknown>) {
  const config = parseTrainConfig({ seed, pool: P, strategy: { ...strategy, budget: B } });
  const ctx = {
    config,
    parts: { ...parts, train: same },
    strategy: strategyFromConfig(config.strategy),
    estimator: createEstimator('grpo'),
    state: initialState(),
    clock: () => 0,
  };
  return (await collect(ctx, 0)).rollout;
}

const WARMUP = Number(values['predictor-warmup']);
for (let k = 0; k < WARMUP; k++) {
  // Warm-up seeds are far from the arms' (0–4), so no arm re-reads a warm-up's rollouts.
  const rollout = await collectOnce(500 + k, { name: 'grpo' });
  await evaluateThenTrain(parts.predictor, samplesFromTrees(rollout.trees, same, { leaves: false }));
  log(`predictor warm-up ${k + 1}/${WARMUP}: ${rollout.trees.length} trees`);
}
const onlyArms = values.arms?.split(',').map((s) => s.trim());
for (const arm of GRADIENT_ARMS.filter((a) => !onlyArms || onlyArms.includes(a.label))) {
  spend[arm.label] = { trajectories: [], turns: [], tokens: [] };
  const perEstimator = new Map<string, { same: Float64Array[]; other: Float64Array[]; byDepth: number[][] }>();
  for (const seed of SEEDS) {
    // An arm naming trace means the paper plus the options it lists, as when the arms were chosen.
    const rollout = await collectOnce(seed, { ...(arm.strategy.name === 'trace' ? { preset: 'paper' } : {}), ...arm.strategy });
    spend[arm.label]!.trajectories.push(rollout.spend.bare + rollout.spend.continuation);
    spend[arm.label]!.turns.push(rollout.spend.turns);
    spend[arm.label]!.tokens.push(rollout.spend.tokens);
    for (const name of arm.estimators) {
      // `estimator@weighting`: the leaf weighting (policy.sharedTurns) the samples are built with.
      const [estimator, weighting = 'per-leaf'] = name.split('@') as [string, SharedTurns?];
      const dir = updateDirection(rollout.trees, ESTIMATORS[estimator]!(), promptsById, grads, maxDepth, weighting);
      const vecs = aligned(
        ids,
        dir.map((g) => ({ promptId: g.promptId, v: g.total })),
      );
      const aa = gram(vecs, vecs, true);
      const e = perEstimator.get(name) ?? { same: [], other: [], byDepth: [] };
      e.same.push(sameRef.cosines(vecs, aa, wSame));
      e.other.push(otherRef.cosines(vecs, aa, wSame));
      e.byDepth.push(refByDepth.map((r, d) => cosine(sum(dir.map((g) => g.byDepth[d]!)), r)));
      perEstimator.set(name, e);
    }
    log(
      `${arm.label} seed ${seed}: ${rollout.spend.bare} bare + ${rollout.spend.continuation} continuations, ${rollout.spend.turns} turns, ${rollout.spend.tokens} tokens`,
    );
  }
  for (const [name, e] of perEstimator) {
    rows.push({ arm: arm.label, estimator: name, same: e.same, other: e.other, byDepth: e.byDepth[0]!.map((_, d) => mean(e.byDepth.map((x) => x[d]!))) });
  }
}

/** Per draw, the mean over seeds (seeds share the prompt draws). */
function meanOverSeeds(draws: readonly Float64Array[]): Float64Array {
  return Float64Array.from(draws[0]!, (_, b) => mean(draws.map((d) => d[b]!)));
}
function mean(xs: readonly number[]): number {
  const v = xs.filter(Number.isFinite);
  return v.length ? v.reduce((a, b) => a + b, 0) / v.length : Number.NaN;
}
const f3 = (x: number) => (Number.isFinite(x) ? x.toFixed(3) : '–');
const bySeed = (draws: readonly Float64Array[]) => new Map(SEEDS.map((s, i) => [s, draws[i]![0]!]));
const zeros = new Map(SEEDS.map((s) => [s, 0]));
/** Mean over seeds and its 95 % bootstrap interval over seeds; `minus`: paired with another row. */
const seedCi = (r: Row, side: 'same' | 'other', minus?: Row) => {
  const x = pairedBootstrap(bySeed(r[side]), minus ? bySeed(minus[side]) : zeros);
  return { mean: x.mean, lo: x.lo, hi: x.hi };
};
const fmtCi = (x: { mean: number; lo: number; hi: number }) => `${f3(x.mean)} [${f3(x.lo)}, ${f3(x.hi)}]`;
/** The paired difference of two rows over prompt draws (mean over seeds per draw). */
const promptCi = (r: Row, minus: Row) => {
  const i = interval(Float64Array.from(meanOverSeeds(r.same), (x, b) => x - meanOverSeeds(minus.same)[b]!));
  return { mean: i.point, lo: i.lo, hi: i.hi };
};
/** cos²/(1 − cos²): for an unbiased estimator with independent noise, it grows linearly with the samples, so its ratio to cost is signal per unit cost. */
const snr = (c: number) => (c * c) / (1 - c * c);

const halfCos = cosine(sum(refSame.halves[0].map((g) => g.total)), sum(refSame.halves[1].map((g) => g.total)));
const crossCos = cosine(refTotal, sum(refOther.full.map((g) => g.total)));
const share = refByDepth.map((r) => dot(r, refTotal) / dot(refTotal, refTotal));
const out: string[] = [];
out.push(
  `Checkpoint: world (env seed ${base.env.kind === 'world' ? base.env.seed : '?'}) BC warm start; ${P} fixed training prompts, J = ${f3(refSame.success)}; disjoint ${P}, J = ${f3(refOther.success)}; reference ${ROLLOUTS} rollouts per prompt; B = ${B}; seeds ${SEEDS.join(', ')}; ${R} bootstrap draws over prompts.`,
);
out.push(`Reference noise: cos(half 1, half 2) = ${f3(halfCos)} (same prompts); cos(same, disjoint) = ${f3(crossCos)}.`);
out.push(`Share of the reference gradient by turn depth (⟨∇J_t, ∇J⟩/|∇J|²): ${share.map((s, d) => `${d + 1}: ${f3(s)}`).join(', ')}.`);
out.push('');
out.push(
  '| arm | estimator | cos, same prompts | cos, disjoint prompts | Δ same vs trace-local: over seeds; over prompts | trajectories / turns / tokens | SNR per 100 traj / 1k turns / 10k tokens |',
);
out.push('|---|---|---|---|---|---|---|');
for (const r of rows) {
  const s = spend[r.arm]!;
  const local = rows.find((x) => x.arm === r.arm && x.estimator === 'trace-local');
  const delta = local && r !== local ? `${fmtCi(seedCi(r, 'same', local))}; ${fmtCi(promptCi(r, local))}` : '';
  const [traj, turns, tokens] = [mean(s.trajectories), mean(s.turns), mean(s.tokens)];
  const c = seedCi(r, 'same');
  const q = snr(c.mean);
  out.push(
    `| ${r.arm} | ${r.estimator} | ${fmtCi(c)} | ${fmtCi(seedCi(r, 'other'))} | ${delta} | ${traj.toFixed(0)} / ${turns.toFixed(0)} / ${tokens.toFixed(0)} | ${f3((100 * q) / traj)} / ${f3((1000 * q) / turns)} / ${f3((10000 * q) / tokens)} |`,
  );
}
out.push('');
out.push(`| arm | estimator | ${refByDepth.map((_, d) => `cos at depth ${d + 1}`).join(' | ')} |`);
out.push(`|---|---|${refByDepth.map(() => '---').join('|')}|`);
for (const r of rows) out.push(`| ${r.arm} | ${r.estimator} | ${r.byDepth.map(f3).join(' | ')} |`);
console.log(out.join('\n'));
log('done');
if (values.json) {
  const json = {
    prompts: P,
    rollouts: ROLLOUTS,
    budget: B,
    seeds: SEEDS,
    J: { same: refSame.success, disjoint: refOther.success },
    halfCos,
    crossCos,
    share,
    spend,
    rows: rows.map((r) => ({
      arm: r.arm,
      estimator: r.estimator,
      same: seedCi(r, 'same'),
      disjoint: seedCi(r, 'other'),
      sameBySeed: [...bySeed(r.same).values()],
      disjointBySeed: [...bySeed(r.other).values()],
      byDepth: r.byDepth,
    })),
  };
  writeFileSync(values.json, JSON.stringify(json, null, 2) + '\n');
}
