/**
 * Tiny-LM benchmarks (needs the warm start: `npx tsx bench/tinylm/warm-start.ts` first).
 *   npx tsx bench/tinylm/run.ts [--model bench/tinylm/warm-start.gguf] [--part speed|compare|all]
 *                               [--seeds 3] [--steps 5] [--questions 60] [--strategies trace,grpo]
 *                               [--skip-warm-eval] [--budget 16] [--first-seed 0]
 * speed:   llama.cpp generation tokens/s (Search-R1 turns from the warm start, threads 1) and jax-js
 *          PPO training tokens/s (forward + backward + Adam, batch 4), 5 repeats each: min/median/max.
 * compare: warm-start greedy accuracy on the first `questions` test questions, then TRACE (trace
 *          strategy + trace estimator) vs GRPO (grpo strategy + grpo estimator) from the same warm start
 *          at equal budget (B trajectories per step; GRPO: B/4 prompts × 4), `seeds` seeds each, through `train()`;
 *          prints held-out accuracy after the last step and the cumulative cost.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { WorldEnv } from '../../src/env/index.ts';
import { greedyAccuracy } from '../../src/eval/index.ts';
import { RunStore } from '../../src/store/index.ts';
import { BOS_ID, LlamaEngine, LmTrainer, modelFromGguf, TinyLmPolicy, tinyPrompt, Tokenizer, trajectorySequence } from '../../src/tinylm/index.ts';
import { demonstrations } from '../../src/tinylm/warm-start.ts';
import { train } from '../../src/train/index.ts';
import { initJax } from '../../src/util/jax.ts';
import { createRng } from '../../src/util/rng.ts';

const { values } = parseArgs({
  options: {
    model: { type: 'string', default: 'bench/tinylm/warm-start.gguf' },
    part: { type: 'string', default: 'all' },
    seeds: { type: 'string', default: '3' },
    steps: { type: 'string', default: '5' },
    questions: { type: 'string', default: '60' },
    strategies: { type: 'string', default: 'trace,grpo' },
    budget: { type: 'string', default: '16' },
    'first-seed': { type: 'string', default: '0' },
    'skip-warm-eval': { type: 'boolean', default: false },
  },
});
const file = values.model!;
const bytes = new Uint8Array(readFileSync(file));
const model = modelFromGguf(bytes, file);
const env = new WorldEnv({ seed: 7, questions: 1500, topK: 3, maxTurns: 6 });
const tokenizer = new Tokenizer(model.vocab);
await initJax();
const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { min: +s[0]!.toFixed(0), median: +s[Math.floor(s.length / 2)]!.toFixed(0), max: +s.at(-1)!.toFixed(0) };
};
console.log(
  `# tinylm bench ${new Date().toISOString()} nproc=${availableParallelism()} node=${process.version} model=${file} (${bytes.length} bytes, vocab ${model.config.vocab}, d${model.config.dim}, ${model.config.layers} layers)`,
);

if (values.part === 'speed' || values.part === 'all') {
  const engine = await LlamaEngine.load(file, { sequences: 1 });
  const stops = [tokenizer.id('</search>')!, tokenizer.id('</answer>')!];
  const gen: number[] = [];
  for (let r = 0; r < 5; r++) {
    let tokens = 0;
    const t0 = performance.now();
    for (const [i, p] of env.test.slice(0, 20).entries()) {
      const out = await engine.generate([BOS_ID, ...tokenizer.encode(tinyPrompt(p))], { maxTokens: 64, stop: stops, seed: r * 100 + i });
      tokens += out.ids.length;
    }
    gen.push(tokens / ((performance.now() - t0) / 1000));
  }
  await engine.dispose();
  console.log(JSON.stringify({ measure: 'generation tok/s (one sequence, threads 1, incl. prompt evaluation)', ...stats(gen) }));
  const demos = await demonstrations(env, env.train.slice(0, 8), { noise: 0.35, rng: createRng(1) });
  const rows = demos.slice(0, 4).map((d) => {
    const seq = trajectorySequence(tokenizer, d.prompt, d.turns);
    return { seq, advantages: seq.mask.map((m, i) => (m ? (i % 2 ? 1 : -1) : 0)) };
  });
  const trainer = new LmTrainer(model, { batch: 4 });
  await trainer.step('ppo', rows, 1e-4); // compile
  const seen: number[] = [];
  const trained: number[] = [];
  const T = Math.ceil(Math.max(...rows.map((r) => r.seq.ids.length)) / 128) * 128;
  for (let r = 0; r < 5; r++) {
    const t0 = performance.now();
    const s = await trainer.step('ppo', rows, 1e-4);
    const sec = (performance.now() - t0) / 1000;
    seen.push(rows.reduce((a, x) => a + x.seq.ids.length, 0) / sec);
    trained.push(s.tokens / sec);
  }
  console.log(
    JSON.stringify({
      measure: `training tok/s (PPO step: forward+backward+Adam, 4 sequences padded to ${T})`,
      sequenceTokens: stats(seen),
      trainedTokens: stats(trained),
    }),
  );
}

if (values.part === 'compare' || values.part === 'all') {
  const Q = Number(values.questions);
  if (!values['skip-warm-eval']) {
    const policy = TinyLmPolicy.fromBytes(bytes);
    const warm = await greedyAccuracy({ env, policy, prompts: env.test.slice(0, Q), rng: createRng(0).fork('eval'), settings: { concurrency: 4 } });
    await policy.dispose();
    console.log(JSON.stringify({ measure: 'warm-start greedy test accuracy', questions: Q, accuracy: warm }));
  }
  const root = mkdtempSync(join(tmpdir(), 'tinylm-compare-'));
  for (const name of values.strategies!.split(',') as Array<'trace' | 'grpo'>) {
    // train() frees its policy and predictor, so every run fits one process; --first-seed still splits
    // long comparisons over processes.
    for (let seed = Number(values['first-seed']); seed < Number(values['first-seed']) + Number(values.seeds); seed++) {
      const t0 = performance.now();
      const out = join(root, `${name}-s${seed}`);
      await train({
        out,
        clock: () => performance.now(),
        config: {
          seed,
          steps: Number(values.steps),
          pool: Math.max(16, Number(values.budget)),
          env: { seed: 7, questions: 1500, topK: 3 },
          strategy:
            name === 'trace'
              ? { name, budget: Number(values.budget), continuations: 2 }
              : { name, budget: Number(values.budget), batchSize: Number(values.budget) / 4 },
          estimator: name,
          policy: { kind: 'tiny-lm', model: file, learningRate: 3e-4, epochs: 1 },
          engine: { maxTurns: 6, concurrency: 4 },
          eval: { every: Number(values.steps), questions: Q },
        },
      });
      const store = RunStore.open(out, { readonly: true });
      const steps = store.steps();
      store.close();
      const last = steps.at(-1)!.metrics;
      const first = steps.find((x) => x.metrics.test_accuracy !== undefined)?.metrics.test_accuracy;
      const updated = steps.filter((x) => (x.metrics.policy_loss ?? 0) !== 0).length;
      console.log(
        JSON.stringify({
          strategy: name,
          seed,
          steps: steps.length,
          stepsWithGradient: updated,
          testAccuracyAfterStep0: first,
          testAccuracy: last.test_accuracy,
          cumTrajectories: last.cum_trajectories,
          cumTokens: last.cum_tokens,
          seconds: Math.round((performance.now() - t0) / 1000),
        }),
      );
    }
  }
}
