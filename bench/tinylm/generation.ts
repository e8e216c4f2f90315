/**
 * llama.cpp generation throughput by parallelism: P sequences of one context decoded in one batch.
 *   nice -n 10 npx tsx bench/tinylm/generation.ts [--model bench/tinylm/warm-start.gguf]
 *       [--parallel 1,4,16] [--repeats 5] [--rollouts 48] [--max-tokens 64] [--threads 1]
 *       [--batching grouped,plain]   (plain: node-llama-cpp's own batching; several modes interleave per repeat)
 *       [--stand-in d256x4]          (a random-weight model of that shape over --model's vocabulary)
 * generate: the first Search-R1 turn of `rollouts` test questions of the embedded world, sampled at
 *           temperature 1 (seeded per rollout) until </search>, </answer>, </s> or max-tokens, with at
 *           most P calls in flight (a worker pool, as the rollout engine's concurrency); generated
 *           tokens per second of wall time (prompt evaluation included), and how many rollouts gave
 *           the same tokens as at P = 1 (batching must not change what is sampled).
 * decode:   the same rollouts without stop tokens (each runs to max-tokens unless it samples </s>):
 *           all sequences decode in step, which isolates the batched decode from prompt evaluation.
 * prompt:   prompt evaluation alone: `rollouts` scripted demonstration trajectories (prompt, turns and
 *           observations, ~150–400 tokens) evaluated with one generated token each, P at a time;
 *           evaluated prompt tokens per second (the practical bound for a trainer's forward pass).
 * A fresh engine (context) per repeat, loaded outside the timed part, so no prompt is served from a
 * previous repeat's cache. min/median/max over repeats of tokens per wall second and per CPU second
 * of the whole process (llama.cpp's and libuv's threads included: the steadier figure when other jobs
 * share the cores); ratios of medians to the part's first row (first P, first mode) of the same run.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { WorldEnv } from '../../src/env/index.ts';
import {
  BOS_ID,
  demonstrations,
  initWeights,
  LlamaEngine,
  modelFromGguf,
  modelToGguf,
  tinyPrompt,
  Tokenizer,
  trajectorySequence,
  type Generated,
  type LlamaConfig,
} from '../../src/tinylm/index.ts';
import { createRng } from '../../src/util/rng.ts';

const { values } = parseArgs({
  options: {
    model: { type: 'string', default: 'bench/tinylm/warm-start.gguf' },
    parallel: { type: 'string', default: '1,4,16' },
    repeats: { type: 'string', default: '5' },
    rollouts: { type: 'string', default: '48' },
    'max-tokens': { type: 'string', default: '64' },
    threads: { type: 'string', default: '1' },
    batching: { type: 'string', default: 'grouped' },
    'stand-in': { type: 'string' },
  },
});
/**
 * `--stand-in dDIMxLAYERS` (e.g. d256x4): a random-weight model of that shape (heads = dim / 32,
 * FFN = 3 × dim) over the --model's vocabulary, written to a temporary file — a bigger shape's speed
 * before a trained one exists. Its near-uniform distributions make rounding flips likelier.
 */
function standIn(spec: string, from: string): string {
  const m = /^d(\d+)x(\d+)$/.exec(spec);
  if (!m) throw new Error(`--stand-in ${spec}: expected dDIMxLAYERS, e.g. d256x4`);
  const base = modelFromGguf(new Uint8Array(readFileSync(from)), from);
  const dim = Number(m[1]);
  const config: LlamaConfig = { ...base.config, dim, layers: Number(m[2]), heads: dim / 32, ffn: 3 * dim };
  const out = join(mkdtempSync(join(tmpdir(), 'tinylm-stand-in-')), `random-${spec}.gguf`);
  writeFileSync(out, modelToGguf({ config, vocab: base.vocab, weights: initWeights(config, createRng(1)) }));
  return out;
}
const file = values['stand-in'] ? standIn(values['stand-in'], values.model!) : values.model!;
const parallel = values.parallel!.split(',').map(Number);
const repeats = Number(values.repeats);
const R = Number(values.rollouts);
const maxTokens = Number(values['max-tokens']);
const threads = Number(values.threads);
const bytes = new Uint8Array(readFileSync(file));
const model = modelFromGguf(bytes, file);
const tokenizer = new Tokenizer(model.vocab);
// The world the committed warm start was trained on (bench/tinylm/warm-start.ts).
const env = new WorldEnv({ seed: 7, questions: 1500, topK: 3, maxTurns: 6 });
const stops = [tokenizer.id('</search>')!, tokenizer.id('</answer>')!];
const firstTurns = env.test.slice(0, R).map((p) => [BOS_ID, ...tokenizer.encode(tinyPrompt(p))]);
const demos = await demonstrations(env, env.train.slice(0, R), { noise: 0.35, rng: createRng(1) });
const trajectories = demos.map((d) => trajectorySequence(tokenizer, d.prompt, d.turns).ids).map((ids) => ids.slice(0, model.config.context - 1));

const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { min: Math.round(s[0]!), median: Math.round(s[Math.floor(s.length / 2)]!), max: Math.round(s.at(-1)!) };
};

/** Runs `calls` with at most `p` in flight (each worker takes the next call when its last one ends). */
async function pool<T>(p: number, n: number, call: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(n);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(p, n) }, async () => {
      while (next < n) {
        const i = next++;
        out[i] = await call(i);
      }
    }),
  );
  return out;
}

console.log(
  `# tinylm generation bench ${new Date().toISOString()} nproc=${availableParallelism()} load=${loadavg()
    .map((x) => x.toFixed(2))
    .join(',')} node=${process.version}`,
);
console.log(
  `# model ${file} (${bytes.length} bytes, vocab ${model.config.vocab}, d${model.config.dim}, ${model.config.layers} layers, context ${model.config.context}); threads ${threads}; batching ${values.batching}; ${R} rollouts, max ${maxTokens} tokens; ${repeats} repeats`,
);
console.log(
  `# prompt part: ${trajectories.length} trajectories, ${trajectories.reduce((a, t) => a + t.length, 0)} tokens (mean ${Math.round(trajectories.reduce((a, t) => a + t.length, 0) / trajectories.length)})`,
);

type Batching = 'grouped' | 'plain';
const modes = values.batching!.split(',') as Batching[];

/** One timed pass on a fresh engine with P sequences: the calls' results and the seconds they took. */
async function timed(
  p: number,
  batching: Batching,
  n: number,
  call: (engine: LlamaEngine, i: number) => Promise<Generated>,
): Promise<{ outs: Generated[]; sec: number; cpu: number }> {
  const engine = await LlamaEngine.load(file, { sequences: p, threads, batching });
  try {
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    const outs = await pool(p, n, (i) => call(engine, i));
    const c = process.cpuUsage(c0);
    return { outs, sec: (performance.now() - t0) / 1000, cpu: (c.user + c.system) / 1e6 };
  } finally {
    await engine.dispose();
  }
}

const PARTS = ['generate', 'decode', 'prompt'] as const;
type Part = (typeof PARTS)[number];
const generatedTokens = (outs: Generated[]) => outs.reduce((a, o) => a + o.ids.length, 0);
const reference: Partial<Record<Part, Generated[]>> = {};
const base: Record<string, number> = {};
const table: Record<Part, string[]> = { generate: [], decode: [], prompt: [] };
const mmm = (x: { min: number; median: number; max: number }) => `${x.min} / ${x.median} / ${x.max}`;
for (const p of parallel) {
  // Per mode and part: tokens/s, tokens per CPU-second, tokens, same-as-reference count. Modes interleave within a repeat.
  const m = new Map<string, { rate: number[]; perCpu: number[]; tokens: number; same?: string }>();
  const cell = (mode: Batching, part: Part) =>
    m.get(`${mode}/${part}`) ?? m.set(`${mode}/${part}`, { rate: [], perCpu: [], tokens: 0 }).get(`${mode}/${part}`)!;
  for (let r = 0; r < repeats; r++) {
    for (const mode of modes) {
      for (const part of PARTS) {
        const c = cell(mode, part);
        const { outs, sec, cpu } =
          part === 'prompt'
            ? await timed(p, mode, trajectories.length, (engine, i) => engine.generate(trajectories[i]!, { maxTokens: 1, stop: [], seed: i }))
            : await timed(p, mode, R, (engine, i) => engine.generate(firstTurns[i]!, { maxTokens, stop: part === 'generate' ? stops : [], seed: 1000 + i }));
        c.tokens = part === 'prompt' ? outs.reduce((a, o) => a + o.promptTokens, 0) : generatedTokens(outs);
        c.rate.push(c.tokens / sec);
        c.perCpu.push(c.tokens / cpu);
        if (part !== 'prompt' && r === 0) {
          const ref = (reference[part] ??= outs);
          c.same = `${outs.filter((o, i) => o.ids.join() === ref[i]!.ids.join()).length}/${R}`;
        }
      }
    }
  }
  for (const mode of modes) {
    for (const part of PARTS) {
      const c = cell(mode, part);
      const wall = stats(c.rate);
      const cpu = stats(c.perCpu);
      base[part] ??= wall.median;
      base[`${part}/cpu`] ??= cpu.median;
      const row = `| ${part} | ${mode} | ${p} | ${c.tokens} | ${mmm(wall)} | ${(wall.median / base[part]).toFixed(2)}× | ${mmm(cpu)} | ${(cpu.median / base[`${part}/cpu`]!).toFixed(2)}× | ${c.same ?? '–'} |`;
      table[part].push(row);
      console.log(row);
    }
  }
}
console.log(
  [
    '',
    '| part | batching | parallel | tokens | tok/s (wall) min / median / max | median vs first row | tok per CPU-s min / median / max | median vs first row | same tokens as first row |',
    '|---|---|---|---|---|---|---|---|---|',
    ...PARTS.flatMap((part) => table[part]),
  ].join('\n'),
);
console.log(
  `# load after: ${loadavg()
    .map((x) => x.toFixed(2))
    .join(',')}`,
);
if (values['stand-in']) rmSync(dirname(file), { recursive: true, force: true });
