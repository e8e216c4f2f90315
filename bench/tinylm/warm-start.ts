/**
 * Builds a tiny-LM warm-start checkpoint, reproducibly (same arguments → same training data and order):
 *   npx tsx bench/tinylm/warm-start.ts [--out bench/tinylm/warm-start-d128.gguf] [--shape 128,4,4,384]
 *        [--epochs 6] [--minutes 28] [--extra 1] [--lr 0.002] [--eval 300] [--grid 2048] [--from smaller.gguf]
 *        [--seed 0] [--steps N] [--horizon N|fit-time]
 * World: seed 7, 1500 questions, top-3 search, 6 turns (the `trace-rl train` / `trace-rl eval`
 * defaults). Model: llama with the world's vocabulary (500 merges), context 768, shape = dim, layers,
 * heads, FFN. Demonstrations: the scripted policy on all 1200 training questions — one on the gold
 * search path (noise 0) each, plus `extra` rounds at noise 0.35 keeping the successful episodes
 * (detours that recover). Supervised training (LmTrainer.fit: packed grids of `grid` positions, one Adam
 * step each, cosine learning-rate decay) stops after `epochs` passes or `minutes` of training.
 * With --from, training starts from that checkpoint grown to the shape (warm-start.ts `grow`).
 * --seed picks the grids' order (and the extra demonstrations); continuing a checkpoint trained with
 * seed 0 under another seed avoids replaying its first grids in the same order. The wall-clock budget
 * makes the step count depend on the machine's load; --steps N (with a large --minutes) stops after N
 * Adam steps, to rebuild a recorded run's checkpoint. --horizon plans the cosine decay over N steps
 * (default: all epochs); fit-time sets N from the pace of the first steps so that the decay ends when
 * `minutes` does (the printed `horizon`, passed as --horizon N --steps N, rebuilds the run).
 * Then the greedy held-out accuracy on the first `eval` test questions (what
 * `trace-rl eval --policy tiny-lm --model <out> --env world --questions <eval>` measures).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { WorldEnv } from '../../src/env/index.ts';
import { greedyAccuracy } from '../../src/eval/index.ts';
import { modelFromGguf, modelToGguf } from '../../src/tinylm/index.ts';
import { TinyLmPolicy } from '../../src/tinylm/tiny-lm-policy.ts';
import { warmStart } from '../../src/tinylm/warm-start.ts';
import { initJax } from '../../src/util/jax.ts';
import { createRng } from '../../src/util/rng.ts';

const { values } = parseArgs({
  options: {
    out: { type: 'string', default: 'bench/tinylm/warm-start-d128.gguf' },
    shape: { type: 'string', default: '128,4,4,384' },
    epochs: { type: 'string', default: '6' },
    minutes: { type: 'string', default: '28' },
    extra: { type: 'string', default: '1' },
    lr: { type: 'string', default: '0.002' },
    eval: { type: 'string', default: '300' },
    grid: { type: 'string', default: '2048' },
    from: { type: 'string' },
    seed: { type: 'string', default: '0' },
    steps: { type: 'string' },
    horizon: { type: 'string' },
  },
});
await initJax();
const [dim, layers, heads, ffn] = values.shape!.split(',').map(Number) as [number, number, number, number];
const t0 = performance.now();
const env = new WorldEnv({ seed: 7, questions: 1500, topK: 3, maxTurns: 6 });
let trained = 0;
let steps = 0;
const { model, demos, epochs, horizon } = await warmStart({
  env,
  shape: { dim, layers, heads, ffn, context: 768, ropeBase: 10000, eps: 1e-5 },
  merges: 500,
  questions: env.train.length,
  noise: 0,
  extra: Number(values.extra),
  extraNoise: 0.35,
  epochs: Number(values.epochs),
  learningRate: Number(values.lr),
  maxSeconds: Number(values.minutes) * 60,
  maxSteps: values.steps === undefined ? undefined : Number(values.steps),
  horizonSteps: values.horizon === undefined ? undefined : values.horizon === 'fit-time' ? 'fit-time' : Number(values.horizon),
  gridTokens: Number(values.grid),
  from: values.from ? modelFromGguf(new Uint8Array(readFileSync(values.from)), values.from) : undefined,
  seed: Number(values.seed),
  onStep: ({ epoch, step, steps: n, loss, tokens, seconds }) => {
    trained += tokens;
    steps++;
    if (step % 10 === 0 || step === n)
      process.stderr.write(
        `epoch ${epoch} step ${step}/${n} loss ${loss.toFixed(3)} (${seconds.toFixed(0)} s, ${trained} trained tokens, load ${loadavg()[0]!.toFixed(1)})\n`,
      );
  },
});
const trainSeconds = (performance.now() - t0) / 1000;
const bytes = modelToGguf(model, `trace-rl tiny-lm warm start d${dim}x${layers}`);
writeFileSync(values.out!, bytes);
const Q = Number(values.eval);
let accuracy: number | undefined;
let evalSeconds: number | undefined;
if (Q > 0) {
  const e0 = performance.now();
  const policy = TinyLmPolicy.fromBytes(bytes);
  accuracy = await greedyAccuracy({ env, policy, prompts: env.test.slice(0, Q), rng: createRng(0).fork('eval'), settings: { concurrency: 4 } });
  await policy.dispose();
  evalSeconds = Math.round((performance.now() - e0) / 1000);
}
console.log(
  JSON.stringify({
    out: values.out,
    bytes: bytes.length,
    shape: { dim, layers, heads, ffn, vocab: model.config.vocab },
    demos: demos.length,
    epochsStarted: epochs,
    steps,
    horizon,
    trainedTokens: trained,
    trainSeconds: Math.round(trainSeconds),
    greedyTestAccuracy: accuracy,
    questions: Q,
    evalSeconds,
    totalSeconds: Math.round((performance.now() - t0) / 1000),
    load: loadavg().map((x) => +x.toFixed(2)),
  }),
);
