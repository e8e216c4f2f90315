/**
 * Tiny-LM training throughput, today's trainer against the baseline commit's, side by side in one run:
 *   npx tsx bench/tinylm/train-speed.ts [--model bench/tinylm/warm-start.gguf] [--baseline 8b6aa26]
 *        [--trajectories 32] [--repeats 5] [--big 64,4,4,256] [--part all|compare|big|update]
 *        [--update-baseline 1f4adb6]
 * Batch: world trajectories of mixed lengths as RL produces them (the scripted policy's episodes on
 * the first training questions, prompt + searches + observations + answer; each turn's tokens get an
 * advantage of ±1, observations 0), one PPO epoch over them = forward + backward + Adam on every
 * minibatch. Baseline: the commit's src checked out into a temporary git worktree under the OS temp
 * directory and its LmTrainer used the way its TinyLmPolicy.update did (longest first, minibatches of
 * 8 rows, one step each); removed at the end. Now: LmTrainer.fit (packed grids, one step per grid).
 * Sequence tokens/s = Σ trajectory tokens / epoch wall time; one compile epoch each, then `repeats`
 * epochs alternating baseline / now (same machine load), min / median / max.
 * Also: the same for a bigger shape (dim, layers, heads, ffn; random weights, same vocabulary; grids of
 * 2048 positions; measured in a child process, `--part big`, because jax-js's heap keeps every buffer
 * size the first part used and 4 GiB does not hold both) and
 * llama.cpp's batched prompt evaluation (8 sequences in one context, threads 1, F32 cache, forward only)
 * of the same trajectories on both shapes — the practical bound.
 * `--part threads` (not in `all`) times one PPO pass (LmTrainer.fit) of the `--threads-baseline`
 * commit, whose trainer read results synchronously (every kernel on the calling thread), against now's,
 * which reads them asynchronously so jax-js runs its kernels on JAX_THREADS worker threads
 * (src/util/wasm-threads.ts); same process, alternating; also checks the two give the same weights.
 * `--part update` (not in `all`) times the tiny-LM policy's PPO update (one pass) as the
 * `--update-baseline` commit ran it — LmTrainer.fit, then logprobs() of every row again for the
 * clip fraction and KL — against now (fit alone; the statistics come from its own forward pass), on
 * `--model`, alternating in one process; then a fresh trainer of each version, as the next run in a
 * process creates, and the time of its first update: the baseline's jit functions belonged to the
 * trainer (traced again), now's are shared by the process.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { readFileSync } from 'node:fs';
import type { Token } from 'node-llama-cpp';
import { WorldEnv } from '../../src/env/index.ts';
import {
  initWeights,
  loadLlama,
  LmTrainer,
  modelFromGguf,
  modelToGguf,
  Tokenizer,
  trajectorySequence,
  type LlamaModel,
  type TokenSequence,
  type TrainRow,
} from '../../src/tinylm/index.ts';
import { demonstrations } from '../../src/tinylm/warm-start.ts';
import { initJax, JAX_THREADS } from '../../src/util/jax.ts';
import { createRng } from '../../src/util/rng.ts';

const { values } = parseArgs({
  options: {
    model: { type: 'string', default: 'bench/tinylm/warm-start.gguf' },
    baseline: { type: 'string', default: '8b6aa26' },
    trajectories: { type: 'string', default: '32' },
    repeats: { type: 'string', default: '5' },
    big: { type: 'string', default: '64,4,4,256' },
    part: { type: 'string', default: 'all' },
    'update-baseline': { type: 'string', default: '1f4adb6' },
    'threads-baseline': { type: 'string', default: '472bb2e' },
  },
});
const repeats = Number(values.repeats);
await initJax();
const model = modelFromGguf(new Uint8Array(readFileSync(values.model!)), values.model);
const c = model.config;
const env = new WorldEnv({ seed: 7, questions: 1500, topK: 3, maxTurns: 6 });
const tokenizer = new Tokenizer(model.vocab);
const demos = await demonstrations(env, env.train.slice(0, Math.ceil(Number(values.trajectories) * 1.2)), { noise: 0.35, rng: createRng(1) });
const rows: TrainRow[] = demos
  .map((d) => trajectorySequence(tokenizer, d.prompt, d.turns))
  .filter((seq) => seq.ids.length <= c.context)
  .slice(0, Number(values.trajectories))
  .map((seq) => ({ seq, advantages: seq.turn.map((i) => (i < 0 ? 0 : i % 2 ? -1 : 1)) }));
const tokens = rows.reduce((n, r) => n + r.seq.ids.length, 0);
const lengths = rows.map((r) => r.seq.ids.length).sort((a, b) => a - b);
const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { min: Math.round(s[0]!), median: Math.round(s[Math.floor(s.length / 2)]!), max: Math.round(s.at(-1)!) };
};
/** Min / median / max of the per-repeat ratio now / before, to two decimals. */
const ratioStats = (now: number[], before: number[]) =>
  Object.fromEntries(Object.entries(stats(now.map((x, i) => (100 * x) / before[i]!))).map(([k, v]) => [k, v / 100]));
console.log(
  `# tinylm train-speed ${new Date().toISOString()} nproc=${availableParallelism()} jax threads=${JAX_THREADS} load=${loadavg()
    .map((x) => x.toFixed(2))
    .join(',')} node=${process.version}`,
);
console.log(`# model ${values.model}: d${c.dim}, ${c.layers} layers, ${c.heads} heads, FFN ${c.ffn}, vocab ${c.vocab}, context ${c.context}`);
console.log(`# batch: ${rows.length} trajectories, ${tokens} tokens, lengths min/median/max ${lengths[0]}/${lengths[lengths.length >> 1]}/${lengths.at(-1)}`);

/** An epoch runner and its disposal. */
type Runner = { epoch: () => unknown; dispose: () => void };

interface OldTrainer {
  step(kind: 'ppo', rows: readonly TrainRow[], lr: number): unknown;
  fit(kind: 'ppo', rows: readonly TrainRow[], lr: number, options: { clip: number }): unknown;
  logprobs(rows: readonly TokenSequence[]): number[][];
  weights(): LlamaModel['weights'];
  dispose(): void;
}

/** A baseline commit's src in a temporary git worktree (node_modules linked), removed after `use`. */
async function withBaseline<T>(commit: string, use: (dir: string) => Promise<T>): Promise<T> {
  const repo = resolve(import.meta.dirname, '../..');
  const wt = mkdtempSync(join(tmpdir(), 'trace-rl-baseline-'));
  rmSync(wt, { recursive: true });
  execFileSync('git', ['-C', repo, 'worktree', 'add', '--detach', wt, commit], { stdio: 'ignore' });
  try {
    symlinkSync(join(repo, 'node_modules'), join(wt, 'node_modules'));
    return await use(wt);
  } finally {
    execFileSync('git', ['-C', repo, 'worktree', 'remove', '--force', wt], { stdio: 'ignore' });
  }
}

/** The baseline trainer, used as its TinyLmPolicy.update did: longest first, minibatches of 8. */
async function baseline(dir: string): Promise<Runner> {
  const mod = (await import(join(dir, 'src/tinylm/trainer.ts'))) as { LmTrainer: new (m: LlamaModel, o: { batch: number }) => OldTrainer };
  const trainer = new mod.LmTrainer(model, { batch: 8 });
  const ordered = [...rows].sort((a, b) => b.seq.ids.length - a.seq.ids.length);
  return {
    epoch: () => {
      for (let i = 0; i < ordered.length; i += 8) trainer.step('ppo', ordered.slice(i, i + 8), 1e-5);
    },
    dispose: () => trainer.dispose(),
  };
}

function current(m: LlamaModel, gridTokens = 4096): Runner {
  const trainer = new LmTrainer(m, { gridTokens });
  return { epoch: () => trainer.fit('ppo', rows, 1e-5), dispose: () => trainer.dispose() };
}

/** Tokens/s of each epoch after a first (compiling) one; `runners` alternate inside each repeat. */
async function measure(runners: Record<string, Runner>): Promise<Record<string, number[]>> {
  const out: Record<string, number[]> = {};
  for (const [name, r] of Object.entries(runners)) {
    const t0 = performance.now();
    await r.epoch();
    console.log(JSON.stringify({ trainer: name, firstEpochSeconds: +((performance.now() - t0) / 1000).toFixed(1) }));
    out[name] = [];
  }
  for (let k = 0; k < repeats; k++) {
    for (const [name, r] of Object.entries(runners)) {
      const t0 = performance.now();
      await r.epoch();
      out[name]!.push(tokens / ((performance.now() - t0) / 1000));
    }
  }
  return out;
}

/** llama.cpp forward-only throughput over the same trajectories: 8 sequences evaluated concurrently in one context. */
async function llamaBound(m: LlamaModel): Promise<number[]> {
  const dir = mkdtempSync(join(tmpdir(), 'tinylm-speed-'));
  const file = join(dir, 'model.gguf');
  writeFileSync(file, modelToGguf(m));
  const llama = await loadLlama();
  const native = await llama.loadModel({ modelPath: file, useMmap: false, gpuLayers: 0 });
  const n = 8;
  const context = await native.createContext({
    sequences: n,
    contextSize: m.config.context,
    threads: 1,
    flashAttention: false,
    experimentalKvCacheKeyType: 'F32',
    experimentalKvCacheValueType: 'F32',
  } as Parameters<typeof native.createContext>[0]);
  const seqs = Array.from({ length: n }, () => context.getSequence());
  const out: number[] = [];
  try {
    for (let k = 0; k <= repeats; k++) {
      const t0 = performance.now();
      let next = 0;
      await Promise.all(
        seqs.map(async (s) => {
          for (let i = next++; i < rows.length; i = next++) {
            await s.clearHistory();
            await s.evaluateWithoutGeneratingNewTokens(rows[i]!.seq.ids as Token[]);
          }
        }),
      );
      if (k > 0) out.push(tokens / ((performance.now() - t0) / 1000));
    }
  } finally {
    await context.dispose();
    await native.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

if (values.part === 'update') {
  // The policy's order (longest first) and clip; a tiny learning rate keeps the weights nearly fixed across repeats.
  const ordered = [...rows].sort((a, b) => b.seq.ids.length - a.seq.ids.length);
  await withBaseline(values['update-baseline']!, async (wt) => {
    const mod = (await import(join(wt, 'src/tinylm/trainer.ts'))) as { LmTrainer: new (m: LlamaModel) => OldTrainer };
    const before = () => {
      const t = new mod.LmTrainer(model);
      return { epoch: () => (t.fit('ppo', ordered, 1e-5, { clip: 0.2 }), t.logprobs(ordered.map((r) => r.seq))), dispose: () => t.dispose() };
    };
    const now = () => {
      const t = new LmTrainer(model);
      return { epoch: () => t.fit('ppo', ordered, 1e-5, { clip: 0.2 }), dispose: () => t.dispose() };
    };
    const runners = { before: before(), now: now() };
    const r = await measure(runners);
    for (const x of Object.values(runners)) x.dispose();
    console.log(JSON.stringify({ measure: `PPO update sequence tok/s, ${values['update-baseline']} (fit + logprobs)`, ...stats(r.before!) }));
    console.log(JSON.stringify({ measure: 'PPO update sequence tok/s, now (fit; statistics from its forward pass)', ...stats(r.now!) }));
    console.log(JSON.stringify({ measure: 'ratio now / before (paired by repeat)', ...ratioStats(r.now!, r.before!) }));
    // The next run in the process: a fresh trainer of each version, first update, then one more (steady).
    for (const [name, make] of [
      ['before', before],
      ['now', now],
    ] as const) {
      const x = make();
      const t0 = performance.now();
      await x.epoch();
      const t1 = performance.now();
      await x.epoch();
      const t2 = performance.now();
      x.dispose();
      console.log(
        JSON.stringify({
          trainer: `${name}, a second trainer in the process`,
          firstUpdateSeconds: +((t1 - t0) / 1000).toFixed(1),
          secondUpdateSeconds: +((t2 - t1) / 1000).toFixed(1),
        }),
      );
    }
  });
} else if (values.part === 'threads') {
  const ordered = [...rows].sort((a, b) => b.seq.ids.length - a.seq.ids.length);
  await withBaseline(values['threads-baseline']!, async (wt) => {
    const mod = (await import(join(wt, 'src/tinylm/trainer.ts'))) as { LmTrainer: new (m: LlamaModel) => OldTrainer };
    // Same weights and same step on both: the threads split each kernel's outputs, so the results should agree.
    const a = new mod.LmTrainer(model);
    const b = new LmTrainer(model);
    a.fit('ppo', ordered, 1e-3, { clip: 0.2 });
    await b.fit('ppo', ordered, 1e-3, { clip: 0.2 });
    const [wa, wb] = [a.weights(), b.weights()];
    let gap = 0;
    wa.layers.forEach((l, i) => l.wq.forEach((x, j) => (gap = Math.max(gap, Math.abs(x - wb.layers[i]!.wq[j]!)))));
    wa.output.forEach((x, j) => (gap = Math.max(gap, Math.abs(x - wb.output[j]!))));
    console.log(JSON.stringify({ check: 'max |weight difference| after one PPO pass at lr 1e-3, one thread vs the pool (wq of every layer, output)', gap }));
    const runners = {
      [`one thread (${values['threads-baseline']})`]: { epoch: () => a.fit('ppo', ordered, 1e-5, { clip: 0.2 }), dispose: () => a.dispose() },
      [`now, ${JAX_THREADS} threads`]: { epoch: () => b.fit('ppo', ordered, 1e-5, { clip: 0.2 }), dispose: () => b.dispose() },
    };
    const r = await measure(runners);
    for (const x of Object.values(runners)) x.dispose();
    const [one, many] = Object.values(r) as [number[], number[]];
    console.log(JSON.stringify({ measure: `PPO pass sequence tok/s, ${values['threads-baseline']} (synchronous reads, one thread)`, ...stats(one) }));
    console.log(JSON.stringify({ measure: `PPO pass sequence tok/s, now (asynchronous reads, ${JAX_THREADS} kernel threads)`, ...stats(many) }));
    console.log(JSON.stringify({ measure: 'ratio now / one thread (paired by repeat)', ...ratioStats(many, one) }));
  });
} else if (values.part !== 'big') {
  await withBaseline(values.baseline!, async (wt) => {
    const runners = { baseline: await baseline(wt), now: current(model) };
    const r = await measure(runners);
    for (const x of Object.values(runners)) x.dispose();
    console.log(JSON.stringify({ measure: `sequence tok/s, baseline ${values.baseline} (minibatches of 8)`, ...stats(r.baseline!) }));
    console.log(JSON.stringify({ measure: 'sequence tok/s, now (LmTrainer.fit, packed grids)', ...stats(r.now!) }));
    console.log(JSON.stringify({ measure: 'ratio now / baseline (paired by repeat)', ...ratioStats(r.now!, r.baseline!) }));
  });
  const bound = await llamaBound(model);
  console.log(JSON.stringify({ measure: `llama.cpp batched prompt evaluation tok/s, d${c.dim}`, ...stats(bound) }));
}

if (values.part === 'big') {
  const [dim, layers, heads, ffn] = values.big!.split(',').map(Number) as [number, number, number, number];
  const bigConfig = { ...c, dim, layers, heads, ffn };
  const big: LlamaModel = { config: bigConfig, vocab: model.vocab, weights: initWeights(bigConfig, createRng(3)) };
  // Grids of 2048 positions (as the warm start uses): the deeper model's backward pass needs more heap.
  const bigRunner = current(big, 2048);
  const rb = await measure({ [`now d${dim}x${layers}`]: bigRunner });
  bigRunner.dispose();
  console.log(JSON.stringify({ measure: `sequence tok/s, now, d${dim}, ${layers} layers, ${heads} heads, FFN ${ffn}`, ...stats(Object.values(rb)[0]!) }));
  const bigBound = await llamaBound(big);
  console.log(JSON.stringify({ measure: `llama.cpp batched prompt evaluation tok/s, d${dim}x${layers}`, ...stats(bigBound) }));
} else if (values.part === 'all') {
  const args = [
    '--import',
    'tsx',
    import.meta.filename,
    '--part',
    'big',
    ...['model', 'trajectories', 'repeats', 'big'].flatMap((k) => [`--${k}`, String(values[k as keyof typeof values])]),
  ];
  execFileSync(process.execPath, args, { stdio: 'inherit' });
}
console.log(
  `# load at the end ${loadavg()
    .map((x) => x.toFixed(2))
    .join(',')}`,
);
