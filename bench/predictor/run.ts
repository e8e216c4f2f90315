/**
 * Predictor benchmark (TRACE issue 4). For each environment — the simulator with exact success
 * probabilities, and the embedded multi-hop world with its scripted noisy policy — and each repeat:
 *  1. train: `steps` steps; each samples `prompts` prompts from a training pool (so prompts recur, as
 *     in RL epochs), grows trees of m bare rollouts + `cont` continuations from random prefixes (the
 *     rollout engine with a fixed allocation, grow.ts), and
 *     measures every predictor on the step's nodes BEFORE training on them (online metrics);
 *  2. test: trees grown the same way on prompts never in the pool; every predictor is measured there.
 * Predictors: the MLP (defaults: question words), the MLP on question templates (names taken out,
 * `questionFeatures: 'template'`), the per-prompt posterior over each (posterior.ts; k₀ = `--strength`,
 * prefixes unchanged; over the default MLP also prefixes shifted, k₀/2 and 2k₀), per-prompt
 * Beta-Bernoulli, global rate, and (simulator) the true probabilities. Brier, ECE (10 bins), AUROC, log
 * loss. Then the time to predict and to train one step on 10,000 nodes (`--timing 0` skips it).
 * Environment seeds are first-seed + repeat (default first seed 1).
 *   npx tsx bench/predictor/run.ts [--env sim|world|both] [--repeats 3] [--first-seed 1] [--steps 8] [--prompts 64] [--m 8] [--cont 8] [--strength 4] [--timing 1]
 */
import os from 'node:os';
import { Simulator, WorldEnv } from '../../src/env/index.ts';
import { ScriptedWorldPolicy, SimulatorPolicy } from '../../src/policy/index.ts';
import type { Environment, KnowsTruth } from '../../src/env/types.ts';
import type { Policy } from '../../src/policy/types.ts';
import {
  BetaBernoulliPredictor,
  createFeatures,
  createMlpPredictor,
  ece,
  GlobalRatePredictor,
  PosteriorPredictor,
  splitQuality,
  samplesFromTrees,
  type NodeKind,
  type PosteriorOptions,
  type StepQuality,
  type SuccessPredictor,
  type TargetSample,
} from '../../src/predict/index.ts';
import type { RolloutTree } from '../../src/tree/index.ts';
import { createRng, shuffled, type Rng } from '../../src/util/rng.ts';
import { growTrees } from './grow.ts';
import type { Prompt } from '../../src/tree/types.ts';

const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const ENVS = arg('env', 'both') === 'both' ? ['sim', 'world'] : [arg('env', 'both')];
const REPEATS = Number(arg('repeats', '3'));
const STEPS = Number(arg('steps', '8'));
const PROMPTS = Number(arg('prompts', '64'));
const M = Number(arg('m', '8'));
const CONT = Number(arg('cont', '8'));
const FIRST_SEED = Number(arg('first-seed', '1'));
const STRENGTH = Number(arg('strength', '4'));
const TIMING = arg('timing', '1') !== '0';
/** Optional MLP overrides for tuning runs, e.g. --mlp '{"l2":1e-4}'. */
const MLP_OPTIONS = JSON.parse(arg('mlp', '{}')) as Record<string, unknown>;

interface Setup {
  env: Environment<unknown>;
  policy: Policy;
  pool: Prompt[];
  test: Prompt[];
  truth?: KnowsTruth;
  maxTurns: number;
}

function setup(kind: string, seed: number): Setup {
  if (kind === 'sim') {
    const sim = new Simulator({ seed });
    return {
      env: sim as Environment<unknown>,
      policy: new SimulatorPolicy(sim),
      pool: sim.prompts(200, `train${seed}`),
      test: sim.prompts(100, `test${seed}`),
      truth: sim,
      maxTurns: sim.maxTurns,
    };
  }
  const world = new WorldEnv({ seed });
  return {
    env: world as Environment<unknown>,
    policy: new ScriptedWorldPolicy(world),
    pool: world.train.slice(0, 200),
    test: world.test.slice(0, 100),
    maxTurns: 6,
  };
}

function grow(s: Setup, prompts: readonly Prompt[], rng: Rng): Promise<RolloutTree[]> {
  return growTrees(s.env, s.policy, prompts, { m: M, continuations: CONT, rng, maxTurns: s.maxTurns });
}

type Row = Record<string, StepQuality>;
const names = [
  'mlp',
  'mlp-template',
  'posterior',
  'posterior-template',
  'posterior-shift',
  'posterior-k/2',
  'posterior-2k',
  'beta-bernoulli',
  'global-rate',
  'truth',
] as const;

/** The shared predictor seen by an extra posterior: predicts as `p`, trains nothing (p is trained once, by its own posterior). */
const frozen = (p: SuccessPredictor): SuccessPredictor => ({
  name: p.name,
  predict: (hs) => p.predict(hs),
  train: () => ({}),
  save: () => p.save(),
  load: () => {},
});

function measure(predictors: Record<string, SuccessPredictor>, samples: readonly TargetSample[], truth?: KnowsTruth): Row {
  const hs = samples.map((s) => s.history);
  const row: Row = {};
  for (const [name, p] of Object.entries(predictors)) row[name] = splitQuality(p.predict(hs), samples);
  if (truth)
    row.truth = splitQuality(
      hs.map((h) => truth.trueSuccess(h.prompt, h.turns)),
      samples,
    );
  return row;
}

const fmt = (xs: number[], d = 3) => {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (s.length === 0) return '–';
  return `${s[0].toFixed(d)} / ${s[Math.floor(s.length / 2)].toFixed(d)} / ${s[s.length - 1].toFixed(d)}`;
};

console.log(`# machine: ${os.cpus().length} cpus (nproc), node ${process.version}, ${new Date().toISOString().slice(0, 16)}Z`);
console.log(`# mlp options: ${JSON.stringify(MLP_OPTIONS)} (defaults otherwise)`);
console.log(
  `# repeats ${REPEATS}, steps ${STEPS}, ${PROMPTS} prompts/step from a pool of 200, m = ${M} bare + ${CONT} continuations per prompt; test: 100 unseen prompts`,
);

for (const kind of ENVS) {
  const online: Row[] = [];
  const tests: Row[] = [];
  const timing = { encode: [] as number[], predict: [] as number[], train: [] as number[], trainFull: [] as number[] };
  let nodesPerStep: number[] = [];
  for (let r = 0; r < REPEATS; r++) {
    const s = setup(kind, FIRST_SEED + r);
    const rng = createRng(100 + r);
    const features = createFeatures({ hashed: { maxTurns: s.maxTurns } });
    const mlp = await createMlpPredictor({ seed: r, features, ...MLP_OPTIONS });
    const templated = await createMlpPredictor({
      seed: r,
      features: createFeatures({ hashed: { maxTurns: s.maxTurns, questionFeatures: 'template' } }),
      ...MLP_OPTIONS,
    });
    const post = (base: SuccessPredictor, o: PosteriorOptions = {}) => new PosteriorPredictor(base, { strength: STRENGTH, ...o });
    const predictors: Record<string, SuccessPredictor> = {
      mlp,
      'mlp-template': templated,
      posterior: post(mlp),
      'posterior-template': post(templated),
      'posterior-shift': post(frozen(mlp), { prefixes: 'shift' }),
      'posterior-k/2': post(frozen(mlp), { strength: STRENGTH / 2 }),
      'posterior-2k': post(frozen(mlp), { strength: 2 * STRENGTH }),
      'beta-bernoulli': new BetaBernoulliPredictor(),
      'global-rate': new GlobalRatePredictor(),
    };
    // Each MLP is trained once, by the posterior over it; the posteriors over a frozen view update only their counts.
    const trained = Object.entries(predictors)
      .filter(([n]) => !n.startsWith('mlp'))
      .map(([, p]) => p);
    const recent: TargetSample[] = [];
    for (let step = 0; step < STEPS; step++) {
      const prompts = shuffled(s.pool, rng.fork(`pick${step}`)).slice(0, PROMPTS);
      const samples = samplesFromTrees(await grow(s, prompts, rng.fork(`step${step}`)), prompts);
      nodesPerStep.push(samples.length);
      const row = measure(predictors, samples, s.truth);
      if (step >= STEPS / 2) online.push(row);
      for (const p of trained) p.train(samples);
      recent.push(...samples);
      process.stderr.write(`${kind} repeat ${r} step ${step}: ${samples.length} nodes; mlp prefix Brier ${row.mlp.prefix.brier.toFixed(3)}\n`);
    }
    const testSamples = samplesFromTrees(await grow(s, s.test, rng.fork('test')), s.test);
    tests.push(measure(predictors, testSamples, s.truth));
    if (!TIMING) continue;
    // Time per 10,000 nodes: features alone, prediction (features + network), one training step of a fresh model.
    const tenK = recent.slice(-10_000);
    while (tenK.length < 10_000) tenK.push(...recent.slice(0, 10_000 - tenK.length));
    const hs = tenK.map((x) => x.history);
    let t0 = performance.now();
    createFeatures({ hashed: { maxTurns: s.maxTurns } }).encode(hs);
    timing.encode.push(performance.now() - t0);
    t0 = performance.now();
    mlp.predict(hs);
    timing.predict.push(performance.now() - t0);
    const fresh = await createMlpPredictor({ seed: 7, features: createFeatures({ hashed: { maxTurns: s.maxTurns } }) });
    t0 = performance.now();
    fresh.train(tenK);
    timing.train.push(performance.now() - t0);
    fresh.train(tenK);
    fresh.train(tenK);
    t0 = performance.now();
    fresh.train(tenK); // the window now holds 4 steps of 10,000 nodes: 157 updates
    timing.trainFull.push(performance.now() - t0);
  }
  const title = kind === 'sim' ? 'Simulator (exact probabilities known)' : 'Embedded multi-hop world, scripted noisy policy (noise 0.35)';
  console.log(`\n## ${title}\nenvironment seeds ${FIRST_SEED}–${FIRST_SEED + REPEATS - 1}; nodes per step (min / median / max): ${fmt(nodesPerStep, 0)}`);
  for (const [label, rows] of [
    ['Unseen test prompts (after training)', tests],
    [`Online: each step's nodes before training on them, steps ${Math.ceil(STEPS / 2)}–${STEPS - 1} (prompts recur)`, online],
  ] as const) {
    console.log(`\n### ${label} — min / median / max over ${rows.length} ${rows === tests ? 'repeats' : 'steps × repeats'}`);
    console.log('| nodes | predictor | Brier | ECE | AUROC | log loss |');
    console.log('| --- | --- | --- | --- | --- | --- |');
    for (const k of ['root', 'prefix'] as NodeKind[]) {
      for (const n of names) {
        if (!rows[0][n]) continue;
        const col = (f: (q: StepQuality[NodeKind]) => number) => fmt(rows.map((x) => f(x[n][k])));
        console.log(`| ${k} | ${n} | ${col((q) => q.brier)} | ${col((q) => ece(q.reliability))} | ${col((q) => q.auroc)} | ${col((q) => q.logLoss)} |`);
      }
    }
  }
  console.log(
    `\n### Online Brier, paired: mean over ${online.length} steps × repeats of (predictor − beta-bernoulli) and of (predictor − mlp), ± 2 standard errors (steps of one repeat are correlated: read ±2 SE as a rough guide)`,
  );
  console.log('| nodes | predictor | mean Brier | − beta-bernoulli | − mlp |');
  console.log('| --- | --- | --- | --- | --- |');
  const meanSe = (xs: number[], d = 3) => {
    const m = xs.reduce((a, b) => a + b, 0) / xs.length;
    const sd = Math.sqrt(xs.reduce((a, b) => a + (b - m) ** 2, 0) / Math.max(1, xs.length - 1));
    return `${m >= 0 ? '+' : '−'}${Math.abs(m).toFixed(d)} ± ${((2 * sd) / Math.sqrt(xs.length)).toFixed(d)}`;
  };
  for (const k of ['root', 'prefix'] as NodeKind[]) {
    for (const n of names) {
      if (!online[0][n]) continue;
      const b = (x: Row, m: string) => x[m][k].brier;
      const mean = online.reduce((a, x) => a + b(x, n), 0) / online.length;
      console.log(
        `| ${k} | ${n} | ${mean.toFixed(3)} | ${meanSe(online.map((x) => b(x, n) - b(x, 'beta-bernoulli')))} | ${meanSe(online.map((x) => b(x, n) - b(x, 'mlp')))} |`,
      );
    }
  }
  console.log(`\n### Reliability of the MLP on unseen test prompts (10 bins of Ṽ, pooled over ${REPEATS} repeats)`);
  console.log('| bin | roots: mean Ṽ | roots: observed | roots: outcomes | prefixes: mean Ṽ | prefixes: observed | prefixes: outcomes |');
  console.log('| --- | --- | --- | --- | --- | --- | --- |');
  const pooled = (k: NodeKind, b: number) => {
    const bins = tests.map((t) => t.mlp[k].reliability[b]);
    const w = bins.reduce((a, x) => a + x.count, 0);
    const mean = (f: (x: (typeof bins)[number]) => number) => (w > 0 ? bins.reduce((a, x) => a + (x.count > 0 ? f(x) * x.count : 0), 0) / w : NaN);
    return w > 0 ? `${mean((x) => x.meanPredicted).toFixed(3)} | ${mean((x) => x.observedRate).toFixed(3)} | ${w.toFixed(0)}` : '– | – | 0';
  };
  for (let b = 0; b < 10; b++)
    console.log(`| [${(b / 10).toFixed(1)}, ${((b + 1) / 10).toFixed(1)}${b === 9 ? ']' : ')'} | ${pooled('root', b)} | ${pooled('prefix', b)} |`);
  if (!TIMING) continue;
  const ms = (xs: number[]) =>
    fmt(
      xs.map((x) => x / 1000),
      2,
    );
  console.log(`\n### Time per 10,000 nodes (seconds, min / median / max over ${REPEATS} repeats)`);
  console.log(
    '| features only (cold caches) | predict (features + network) | train one step, fresh model (features + 40 Adam updates of 256) | train one step with a full window (4 × 10,000 nodes: 157 updates) |',
  );
  console.log('| --- | --- | --- | --- |');
  console.log(`| ${ms(timing.encode)} | ${ms(timing.predict)} | ${ms(timing.train)} | ${ms(timing.trainFull)} |`);
}
