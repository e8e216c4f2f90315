/**
 * Is the tiny LM's RL update pointed the right way? (issue 18, development only: seeds 0–4.)
 *   nice -n 10 npx tsx bench/tinylm/rl-sanity.ts [--model bench/tinylm/warm-start-d64x4d.gguf]
 *     [--questions 16] [--steps 40] [--budget 16] [--group 4] [--lr 0.0003] [--epochs 1]
 *     [--measure-every 10] [--samples 8] [--heldout 100] [--seed 0] [--out file.json]
 *
 * Real components throughout (the tiny-LM policy on llama.cpp + jax-js, the embedded world, the train
 * step's own collect / advantage / update path), on a FIXED set of `questions` training questions:
 * each step draws `budget / group` of them (seeded epoch shuffles, so every question recurs every
 * questions·group/budget steps) and runs grpo groups of `group` trajectories, estimator trace, then the
 * policy update exactly as `trace-rl train` does. Prints per step:
 *  - the update's own ratio statistics (first pass): approx KL and clip fraction between llama.cpp's
 *    sampling log-probs and the trainer's log π, ≈ 0 if the sampler and the trainer agree and the
 *    previous update's weights reached llama.cpp;
 *  - direction: after the update, Σ A·(log π_new − log π_old) over the trained tokens (> 0 when the
 *    update raised the probability of positive-advantage tokens and lowered the negative ones), and the
 *    mean change of a trajectory's log-probability for positive and for negative advantages;
 * and every `measure-every` steps: the temperature-1 success rate on the fixed questions (`samples`
 * rollouts each), greedy success on them, and (first and last) greedy success on `heldout` test questions.
 * If the update is right, the fixed questions' temperature-1 reward rises over the steps.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createEstimator } from '../../src/advantage/index.ts';
import { strategyFromConfig } from '../../src/allocate/index.ts';
import { greedyAccuracy } from '../../src/eval/index.ts';
import { runStep } from '../../src/rollout/index.ts';
import { rewardedLeaves, type Prompt } from '../../src/tree/index.ts';
import type { TinyLmPolicy } from '../../src/tinylm/index.ts';
import { buildComponents, collect, initialState, parseTrainConfig, type StepContext } from '../../src/train/index.ts';
import { policySamples } from '../../src/train/policy-samples.ts';
import { createRng } from '../../src/util/rng.ts';

const { values } = parseArgs({
  options: {
    model: { type: 'string', default: 'bench/tinylm/warm-start-d64x4d.gguf' },
    questions: { type: 'string', default: '16' },
    steps: { type: 'string', default: '40' },
    budget: { type: 'string', default: '16' },
    group: { type: 'string', default: '4' },
    lr: { type: 'string', default: '0.0003' },
    epochs: { type: 'string', default: '1' },
    'measure-every': { type: 'string', default: '10' },
    samples: { type: 'string', default: '8' },
    heldout: { type: 'string', default: '100' },
    seed: { type: 'string', default: '0' },
    out: { type: 'string' },
  },
});
const num = (k: keyof typeof values) => Number(values[k]);
const seed = num('seed');
if (seed >= 100) throw new Error('rl-sanity is development only: use seeds 0–4');
const [Q, steps, budget, group, every, samples, heldout] = [
  num('questions'),
  num('steps'),
  num('budget'),
  num('group'),
  num('measure-every'),
  num('samples'),
  num('heldout'),
];
const config = parseTrainConfig({
  seed,
  steps,
  env: { kind: 'world' },
  pool: budget / group,
  strategy: { name: 'grpo', budget },
  estimator: 'trace',
  predictor: { kind: 'global' },
  policy: { kind: 'tiny-lm', model: values.model, learningRate: num('lr'), epochs: num('epochs') },
  engine: { maxTurns: 6, concurrency: 8 },
});
if (config.policy.kind !== 'tiny-lm') throw new Error('rl-sanity trains the tiny LM');
const update = { learningRate: config.policy.learningRate, clip: config.policy.clip, epochs: config.policy.epochs };
const built = await buildComponents(config);
const fixed = built.train.slice(0, Q);
const parts = { ...built, train: fixed };
const policy = built.trainable as unknown as TinyLmPolicy;
const strategy = strategyFromConfig(config.strategy);
const estimator = createEstimator(config.estimator, { scale: config.advantageScale });
const ctx: StepContext = { config, parts, strategy, estimator, state: initialState(), clock: () => performance.now() };

/** Temperature-1 success on the fixed questions (`samples` each) and greedy success on them. */
async function measure(step: number, withHeldout: boolean) {
  const t0 = performance.now();
  const sampled = await runStep({
    prompts: fixed,
    env: parts.env,
    policy,
    rng: createRng(seed).fork(`measure/${step}`),
    rootPlan: new Map(fixed.map((p) => [p.id, samples])),
    settings: config.engine,
  });
  let s = 0;
  let n = 0;
  for (const t of sampled.trees)
    for (const l of rewardedLeaves(t)) {
      s += l.reward!;
      n++;
    }
  const greedy = (prompts: readonly Prompt[]) =>
    greedyAccuracy({ env: parts.env, policy, prompts, rng: createRng(seed).fork(`greedy/${step}`), settings: config.engine });
  const out: Record<string, number> = { step, sampledReward: s / n, greedyFixed: await greedy(fixed) };
  if (withHeldout) out.greedyHeldout = await greedy(built.test.slice(0, heldout));
  out.seconds = (performance.now() - t0) / 1000;
  return out;
}

const log: Record<string, unknown>[] = [];
const print = (x: Record<string, unknown>) => {
  log.push(x);
  console.log(JSON.stringify(x));
};
console.log(
  `# rl-sanity ${new Date().toISOString()} model=${values.model} fixed=${Q} steps=${steps} B=${budget} group=${group} lr=${values.lr} epochs=${values.epochs} seed=${seed}`,
);
print({ kind: 'measure', ...(await measure(-1, true)) });
for (let step = 0; step < steps; step++) {
  const t0 = performance.now();
  const collected = await collect(ctx, step);
  const batch = policySamples(estimator, collected.rollout.trees, collected.pool);
  const rows = policy.rows(batch);
  const before = policy.trainer.logprobs(rows.map((r) => r.seq));
  const m = await policy.update(batch, update);
  const after = policy.trainer.logprobs(rows.map((r) => r.seq));
  // Direction of the update on its own batch: Σ A·Δlog π over trained tokens; per trajectory Δ log-prob.
  let dir = 0;
  let samplerGap = 0;
  let gapN = 0;
  const pos: number[] = [];
  const neg: number[] = [];
  rows.forEach((r, i) => {
    let d = 0;
    let adv = 0;
    r.seq.ids.forEach((_, t) => {
      if (r.seq.mask[t] !== 1) return;
      samplerGap = Math.max(samplerGap, Math.abs(before[i]![t]! - r.seq.logprobs[t]!));
      gapN++;
      if (r.advantages![t] === 0) return;
      dir += r.advantages![t]! * (after[i]![t]! - before[i]![t]!);
      d += after[i]![t]! - before[i]![t]!;
      adv = r.advantages![t]!;
    });
    if (adv > 0) pos.push(d);
    else if (adv < 0) neg.push(d);
  });
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
  let reward = 0;
  let leaves = 0;
  for (const t of collected.rollout.trees)
    for (const l of rewardedLeaves(t)) {
      reward += l.reward!;
      leaves++;
    }
  print({
    kind: 'step',
    step,
    reward: reward / leaves,
    trainedTrajectories: pos.length + neg.length,
    approxKl: m.approxKl,
    clipFraction: m.clipFraction,
    maxSamplerGap: samplerGap,
    tokens: gapN,
    direction: dir,
    dLogpPos: mean(pos),
    dLogpNeg: mean(neg),
    seconds: (performance.now() - t0) / 1000,
  });
  if ((step + 1) % every === 0 || step === steps - 1) print({ kind: 'measure', ...(await measure(step, step === steps - 1)) });
}
if (values.out) writeFileSync(values.out, JSON.stringify({ argv: values, log }, null, 1));
await policy.dispose();
