/**
 * Supervised warm start: demonstrations are episodes of the scripted world policy (the gold search
 * path with noise: look-alike detours, misread answers — policy/scripted-policy.ts) played in the
 * real environment, so observations are exactly what rollouts will see. The model is trained on the
 * demonstrations' turn tokens (observations masked) for a fixed number of passes — few enough that
 * it solves only a minority of held-out questions and RL has room to improve it.
 */
import { ScriptedWorldPolicy } from '../policy/scripted-policy.ts';
import type { WorldEnv } from '../env/world/world-env.ts';
import type { Prompt, Turn } from '../tree/types.ts';
import { createRng, type Rng } from '../util/rng.ts';
import { initWeights, type LlamaConfig, type LlamaModel, type LlamaWeights } from './model.ts';
import { trajectorySequence } from './sequence.ts';
import { Tokenizer } from './tokenizer.ts';
import { LmTrainer } from './trainer.ts';
import { worldVocabulary } from './world-text.ts';

export interface Demonstration {
  prompt: Prompt;
  turns: Turn[];
  reward: number;
}

/** One scripted episode per prompt (noise: the scripted policy's base noise). */
export async function demonstrations(env: WorldEnv, prompts: readonly Prompt[], options: { noise: number; rng: Rng }): Promise<Demonstration[]> {
  const policy = new ScriptedWorldPolicy(env, { noise: options.noise });
  const out: Demonstration[] = [];
  for (const prompt of prompts) {
    let state = env.reset(prompt);
    const turns: Turn[] = [];
    const rng = options.rng.fork(prompt.id);
    for (;;) {
      const o = await policy.act({ prompt, rendered: '', turns, rng: rng.fork(turns.length), maxTokens: 64 });
      const r = await env.step(state, o.action!);
      turns.push({ thought: o.thought ?? '', action: o.action!, observation: r.observation, text: o.text });
      state = r.state;
      if (r.done) {
        out.push({ prompt, turns, reward: r.reward ?? 0 });
        break;
      }
    }
  }
  return out;
}

export interface WarmStartOptions {
  env: WorldEnv;
  /** Model shape except the vocabulary size (taken from the learned vocabulary). */
  shape: Omit<LlamaConfig, 'vocab'>;
  /** Merged vocabulary pieces. */
  merges: number;
  /** Training questions used for demonstrations. */
  questions: number;
  /**
   * Demonstrations per question: one at `noise` (0 = the gold search path), plus `extra` at
   * `extraNoise` of which only the successful ones are kept (detours that recover: varied searches).
   */
  noise: number;
  extra?: number;
  extraNoise?: number;
  /** Passes over the demonstrations. */
  epochs: number;
  /** Peak learning rate; cosine decay to a tenth of it over the run. */
  learningRate: number;
  /** Positions per packed grid (one Adam step). */
  gridTokens?: number;
  /** Stop after the grid that crosses this many seconds of training (a wall-clock budget). */
  maxSeconds?: number;
  /** Stop after this many Adam steps in all (rebuilds a budget-stopped run exactly: its step count is load-dependent). */
  maxSteps?: number;
  /**
   * Plan the cosine decay over this many Adam steps instead of all `epochs`, so that a run stopped by
   * `maxSteps` or `maxSeconds` still ends at the decayed rate (stopping at ~half the peak cost the
   * d64 × 4 chain most of a pass). 'fit-time' (needs `maxSeconds`) sets it once, after
   * the first CALIBRATION_STEPS steps, to the steps the rest of the budget holds at their pace; the
   * result reports the horizon, and `horizonSteps: N, maxSteps: N` rebuilds the run.
   */
  horizonSteps?: number | 'fit-time';
  seed: number;
  /**
   * Start from this smaller checkpoint (same vocabulary and width) grown to `shape`: its layers come
   * first, the extra layers and the extra FFN units start with zero output weights (W_o, W_down), so the
   * grown model computes exactly what the checkpoint computes until training moves them.
   */
  from?: LlamaModel;
  onStep?: (info: { epoch: number; step: number; steps: number; loss: number; tokens: number; seconds: number; lr: number }) => void;
}

/** The checkpoint's weights inside a deeper / wider-FFN model (see WarmStartOptions.from). */
export function grow(from: LlamaModel, config: LlamaConfig, fresh: LlamaWeights): LlamaWeights {
  const f = from.config;
  if (f.vocab !== config.vocab || f.dim !== config.dim || f.heads !== config.heads || f.layers > config.layers || f.ffn > config.ffn) {
    throw new RangeError(
      `cannot grow d${f.dim}/${f.heads} heads/${f.layers} layers/FFN ${f.ffn}/vocab ${f.vocab} into d${config.dim}/${config.heads}/${config.layers}/${config.ffn}/${config.vocab}`,
    );
  }
  const d = config.dim;
  const layers = fresh.layers.map((l, i) => {
    const old = from.weights.layers[i];
    if (!old) return { ...l, wo: new Float32Array(d * d), down: new Float32Array(d * config.ffn) };
    // gate/up are (ffn, dim): the old rows first; down is (dim, ffn): old columns, zeros for new units.
    const gate = l.gate.slice();
    const up = l.up.slice();
    gate.set(old.gate);
    up.set(old.up);
    const down = new Float32Array(d * config.ffn);
    for (let r = 0; r < d; r++) down.set(old.down.subarray(r * f.ffn, (r + 1) * f.ffn), r * config.ffn);
    return { ...old, gate, up, down };
  });
  return { embed: from.weights.embed, output: from.weights.output, outNorm: from.weights.outNorm, layers };
}

/** Steps timed before a 'fit-time' horizon is fixed (the first includes compilation, so it is left out of the pace). */
export const CALIBRATION_STEPS = 12;

/**
 * The steps a time budget holds: `done` steps took `seconds`, the first of them `first` (compilation,
 * not repeated); the rest of the budget is filled at the pace of steps 2…done. At least one more step.
 */
export function fitHorizon(done: number, seconds: number, first: number, budget: number): number {
  const pace = (seconds - first) / Math.max(1, done - 1);
  return done + Math.max(1, Math.floor((budget - seconds) / pace));
}

export async function warmStart(o: WarmStartOptions): Promise<{ model: LlamaModel; demos: Demonstration[]; epochs: number; steps: number; horizon: number }> {
  if (o.horizonSteps === 'fit-time' && o.maxSeconds === undefined)
    throw new RangeError("warmStart: horizonSteps 'fit-time' needs maxSeconds (the budget it fits the decay into)");
  if (typeof o.horizonSteps === 'number' && !(Number.isInteger(o.horizonSteps) && o.horizonSteps > 0))
    throw new RangeError(`warmStart: horizonSteps must be a positive integer or 'fit-time', got ${o.horizonSteps}`);
  const vocab = worldVocabulary(o.env, { merges: o.merges });
  const config: LlamaConfig = { ...o.shape, vocab: vocab.pieces.length };
  const rng = createRng(o.seed);
  const fresh = initWeights(config, rng.fork('init'));
  const model: LlamaModel = { config, vocab, weights: o.from ? grow(o.from, config, fresh) : fresh };
  const tokenizer = new Tokenizer(vocab);
  const prompts = o.env.train.slice(0, o.questions);
  const demos = await demonstrations(o.env, prompts, { noise: o.noise, rng: rng.fork('demos') });
  for (let k = 0; k < (o.extra ?? 0); k++) {
    const more = await demonstrations(o.env, prompts, { noise: o.extraNoise ?? 0.35, rng: rng.fork(`extra/${k}`) });
    demos.push(...more.filter((d) => d.reward === 1));
  }
  const rows = demos.map((d) => ({ seq: trajectorySequence(tokenizer, d.prompt, d.turns) })).filter((r) => r.seq.ids.length <= config.context);
  const trainer = new LmTrainer(model, { gridTokens: o.gridTokens ?? 4096 });
  const t0 = performance.now();
  let steps = 0;
  let epochs = 0;
  let horizon = typeof o.horizonSteps === 'number' ? o.horizonSteps : undefined;
  let firstStepDone = 0;
  let perEpoch = 1;
  try {
    for (let e = 0; e < o.epochs; e++) {
      const r = rng.fork(`epoch/${e}`);
      // fit() packs the epoch into grids of similar lengths; the grids run in a shuffled order.
      const shuffle = (n: number) => {
        const order = Array.from({ length: n }, (_, i) => i);
        for (let i = n - 1; i > 0; i--) {
          const j = r.int(i + 1);
          [order[i], order[j]] = [order[j]!, order[i]!];
        }
        return order;
      };
      let over = false;
      let lr = o.learningRate;
      const done = await trainer.fit(
        'sft',
        rows,
        (step, n) => {
          // Cosine decay from the peak to a tenth over the horizon (default: all epochs, which pack into the same n grids).
          const f = Math.min(1, (steps + step) / Math.min(horizon ?? Infinity, o.epochs * n));
          lr = o.learningRate * (0.1 + 0.45 * (1 + Math.cos(Math.PI * f)));
          return lr;
        },
        {
          order: shuffle,
          after: (info) => {
            const seconds = (performance.now() - t0) / 1000;
            const taken = steps + info.step;
            perEpoch = info.steps;
            if (taken === 1) firstStepDone = seconds;
            if (o.horizonSteps === 'fit-time' && horizon === undefined && taken === CALIBRATION_STEPS)
              horizon = fitHorizon(taken, seconds, firstStepDone, o.maxSeconds!);
            o.onStep?.({ epoch: e, step: info.step, steps: info.steps, loss: info.loss, tokens: info.tokens, seconds, lr });
            over = (o.maxSeconds !== undefined && seconds > o.maxSeconds) || (o.maxSteps !== undefined && taken >= o.maxSteps);
            return over;
          },
        },
      );
      steps += done.steps;
      epochs = e + 1;
      if (over) break;
    }
    return { model: { config, vocab, weights: trainer.weights() }, demos, epochs, steps, horizon: Math.min(horizon ?? Infinity, o.epochs * perEpoch) };
  } finally {
    trainer.dispose();
  }
}
