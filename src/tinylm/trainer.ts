/**
 * Training the llama weights in jax-js: one jit-compiled function per (loss, batch shape) does the
 * forward pass, the backward pass, global-norm gradient clipping and Adam. Two losses over the
 * trainable tokens (mask 1), each averaged over those tokens:
 *   supervised   L = −Σ mask·log π(t)/Σ mask
 *   PPO          L = −Σ mask·min(ρA, clip(ρ, 1 − ε, 1 + ε)A)/Σ mask,  ρ = exp(log π(t) − log π_old(t))
 * with A the token's advantage (its turn's tree-aware advantage) and log π_old the probability
 * llama.cpp sampled it with. Adam: m ← β₁m + (1−β₁)g, v ← β₂v + (1−β₂)g², θ ← θ − α_t m/(√v + ε_A),
 * α_t = α√(1−β₂ᵗ)/(1−β₁ᵗ). Sequences are padded to a multiple of 128 tokens (fewer recompilations).
 */
import { jit, numpy as np, tree, valueAndGrad } from '@jax-js/jax';
import { forwardConsts, fromParams, oneHot, toParams, tokenLogprobs, type ForwardConsts, type Params } from './forward.ts';
import type { LlamaConfig, LlamaModel, LlamaWeights } from './model.ts';
import type { TokenSequence } from './sequence.ts';

type Arr = np.Array;

export interface TrainerOptions {
  /** Rows per minibatch (padded with empty rows). Default 8. */
  batch?: number;
  /** Gradient global-norm cap. Default 1. */
  maxGradNorm?: number;
  beta1?: number;
  beta2?: number;
}

/** One row of a batch: the sequence and each token's advantage (0 where it carries none). */
export interface TrainRow {
  seq: TokenSequence;
  advantages?: number[];
}

export interface BatchStats {
  loss: number;
  /** Trainable tokens in the batch. */
  tokens: number;
}

type StepFn = (p: Params, m: Params, v: Params, batch: Arr[], k: ForwardConsts, alpha: Arr) => [Params, Params, Params, Arr];

const PAD = 128;

/** Tokens of a sequence that matter for its loss: through the last mask-1 token (all, when none is masked in). */
function needed(seq: TokenSequence): number {
  const last = seq.mask.lastIndexOf(1);
  return last < 0 ? seq.ids.length : last + 1;
}

export class LmTrainer {
  readonly config: LlamaConfig;
  private params: Params;
  private m: Params;
  private v: Params;
  private t = 0;
  private readonly steps = new Map<string, StepFn>();
  private readonly evals = new Map<string, (p: Params, x: Arr, y: Arr, k: ForwardConsts) => Arr>();
  readonly opts: Required<TrainerOptions>;

  constructor(model: Pick<LlamaModel, 'config' | 'weights'>, options: TrainerOptions = {}) {
    this.config = model.config;
    this.opts = { batch: 8, maxGradNorm: 1, beta1: 0.9, beta2: 0.999, ...options };
    this.params = toParams(model.weights, model.config);
    this.m = tree.map((a: Arr) => np.zeros(a.shape), tree.ref(this.params)) as Params;
    this.v = tree.map((a: Arr) => np.zeros(a.shape), tree.ref(this.params)) as Params;
  }

  /** Adam steps taken. */
  get updates(): number {
    return this.t;
  }

  /** Current weights as plain arrays. */
  weights(): LlamaWeights {
    return fromParams(this.params);
  }

  /** Adam moments and step count, for checkpoints. */
  optimizerState(): { t: number; m: LlamaWeights; v: LlamaWeights } {
    return { t: this.t, m: fromParams(this.m), v: fromParams(this.v) };
  }

  /** Replaces weights and (when given) the optimiser state. */
  setState(weights: LlamaWeights, opt?: { t: number; m: LlamaWeights; v: LlamaWeights }): void {
    tree.dispose(this.params);
    this.params = toParams(weights, this.config);
    if (opt) {
      tree.dispose(this.m);
      tree.dispose(this.v);
      this.m = toParams(opt.m, this.config);
      this.v = toParams(opt.v, this.config);
      this.t = opt.t;
    }
  }

  private stepFn(kind: 'sft' | 'ppo', B: number, T: number, clip: number): StepFn {
    // ε is a constant of the compiled function, so it is part of the cache key.
    const key = `${kind}:${B}:${T}:${clip}`;
    let fn = this.steps.get(key);
    if (fn) return fn;
    const c = this.config;
    const { beta1, beta2, maxGradNorm } = this.opts;
    const loss = (q: Params, batch: Arr[], k: ForwardConsts): Arr => {
      const [x, y, mask, adv, old, scale] = batch as [Arr, Arr, Arr, Arr, Arr, Arr];
      const logp = tokenLogprobs(q, x, y, k, c);
      if (kind === 'sft') {
        adv.dispose();
        old.dispose();
        return logp.mul(mask).sum().mul(scale).neg();
      }
      const ratio = np.exp(logp.sub(old));
      const s1 = ratio.ref.mul(adv.ref);
      const s2 = np.clip(ratio, 1 - clip, 1 + clip).mul(adv);
      return np.minimum(s1, s2).mul(mask).sum().mul(scale).neg();
    };
    fn = jit((p: Params, m: Params, v: Params, batch: Arr[], k: ForwardConsts, alpha: Arr) => {
      const [value, g] = valueAndGrad((q: Params) => loss(q, batch, k))(tree.ref(p));
      const sq = (tree.leaves(tree.ref(g)) as Arr[]).map((a) => a.ref.mul(a).sum()).reduce((a, b) => a.add(b));
      const shrink = np.minimum(np.reciprocal(np.sqrt(sq).add(1e-12)).mul(maxGradNorm), 1);
      const gc = tree.map((gi: Arr) => gi.mul(shrink.ref), g) as Params;
      shrink.dispose();
      const m2 = tree.map((mi: Arr, gi: Arr) => mi.mul(beta1).add(gi.mul(1 - beta1)), m, tree.ref(gc)) as Params;
      const v2 = tree.map((vi: Arr, gi: Arr) => vi.mul(beta2).add(gi.ref.mul(gi).mul(1 - beta2)), v, gc) as Params;
      const p2 = tree.map((pi: Arr, mi: Arr, vi: Arr) => pi.sub(mi.mul(alpha.ref).div(np.sqrt(vi).add(1e-8))), p, tree.ref(m2), tree.ref(v2)) as Params;
      alpha.dispose();
      return [p2, m2, v2, value] as [Params, Params, Params, Arr];
    }) as unknown as StepFn;
    this.steps.set(key, fn);
    return fn;
  }

  /** Pads rows to [B, T] arrays: inputs/targets one-hot, mask, advantages, old log-probs, 1/Σmask. */
  private batchArrays(rows: readonly TrainRow[], T: number): { arrays: Arr[]; tokens: number } {
    const B = this.opts.batch;
    const V = this.config.vocab;
    const mask = new Float32Array(B * T);
    const adv = new Float32Array(B * T);
    const old = new Float32Array(B * T);
    let tokens = 0;
    rows.forEach((r, b) => {
      // Position t predicts token t+1: the loss on token t+1 sits at t.
      for (let t = 0; t + 1 < needed(r.seq); t++) {
        const w = r.seq.mask[t + 1]!;
        const a = r.advantages ? r.advantages[t + 1]! : 1;
        if (w === 0 || a === 0) continue;
        mask[b * T + t] = 1;
        adv[b * T + t] = a;
        old[b * T + t] = r.seq.logprobs[t + 1]!;
        tokens++;
      }
    });
    // A short last batch is padded with empty rows: the jit-compiled step has a fixed [B, T] shape.
    const empty = Array.from({ length: B - rows.length }, () => []);
    const inputs = [...rows.map((r) => r.seq.ids.slice(0, needed(r.seq) - 1)), ...empty];
    const targets = [...rows.map((r) => r.seq.ids.slice(1, needed(r.seq))), ...empty];
    const shape = [B, T];
    const arrays = [oneHot(inputs, T, V), oneHot(targets, T, V), np.array(mask).reshape(shape), np.array(adv).reshape(shape), np.array(old).reshape(shape), np.array(new Float32Array([1 / Math.max(tokens, 1)])).reshape([])];
    return { arrays, tokens };
  }

  /** Positions needed: up to the last trainable token (a trailing observation conditions nothing trained). */
  private padLength(rows: readonly TrainRow[]): number {
    const longest = Math.max(1, ...rows.map((r) => needed(r.seq))) - 1;
    if (longest > this.config.context) throw new RangeError(`a sequence needs ${longest + 1} tokens; the model's context is ${this.config.context}`);
    return Math.min(Math.max(PAD, Math.ceil(longest / PAD) * PAD), this.config.context);
  }

  /**
   * One Adam step of size `lr` on ≤ batch rows (PPO clips the ratio to [1 − clip, 1 + clip]). Rows
   * without trainable tokens contribute nothing.
   */
  step(kind: 'sft' | 'ppo', rows: readonly TrainRow[], lr: number, clip = 0.2): BatchStats {
    if (rows.length > this.opts.batch) throw new RangeError(`${rows.length} rows exceed the batch size ${this.opts.batch}`);
    const T = this.padLength(rows);
    const { arrays, tokens } = this.batchArrays(rows, T);
    if (tokens === 0) {
      tree.dispose(arrays);
      return { loss: 0, tokens: 0 };
    }
    this.t++;
    const { beta1, beta2 } = this.opts;
    const alpha = np.array(new Float32Array([(lr * Math.sqrt(1 - beta2 ** this.t)) / (1 - beta1 ** this.t)])).reshape([]);
    const [p, m, v, value] = this.stepFn(kind, this.opts.batch, T, clip)(this.params, this.m, this.v, arrays, forwardConsts(this.config, T), alpha);
    this.params = p;
    this.m = m;
    this.v = v;
    const loss = (value.dataSync() as Float32Array)[0]!;
    return { loss, tokens };
  }

  /** Frees the weights and Adam moments (jax-js's wasm heap is 4 GiB per process). */
  dispose(): void {
    tree.dispose(this.params);
    tree.dispose(this.m);
    tree.dispose(this.v);
    this.steps.clear();
    this.evals.clear();
  }

  /**
   * log π(t_{i+1} | t_{≤i}) of each row under the current weights (index 0 gets 0). Tokens after a
   * row's last generated token (mask 1) are not evaluated and get 0; a row with no mask gets all of
   * its tokens evaluated.
   */
  logprobs(rows: readonly TokenSequence[]): number[][] {
    const out: number[][] = [];
    for (let i = 0; i < rows.length; i += this.opts.batch) {
      const chunk = rows.slice(i, i + this.opts.batch);
      const T = this.padLength(chunk.map((seq) => ({ seq })));
      const key = `${this.opts.batch}:${T}`;
      let fn = this.evals.get(key);
      if (!fn) {
        const c = this.config;
        fn = jit((p: Params, x: Arr, y: Arr, k: ForwardConsts) => tokenLogprobs(p, x, y, k, c)) as unknown as (p: Params, x: Arr, y: Arr, k: ForwardConsts) => Arr;
        this.evals.set(key, fn);
      }
      const V = this.config.vocab;
      const empty = Array.from({ length: this.opts.batch - chunk.length }, () => []);
      const x = oneHot([...chunk.map((s) => s.ids.slice(0, needed(s) - 1)), ...empty], T, V);
      const y = oneHot([...chunk.map((s) => s.ids.slice(1, needed(s))), ...empty], T, V);
      const lp = fn(tree.ref(this.params), x, y, forwardConsts(this.config, T));
      const data = lp.dataSync() as Float32Array;
      chunk.forEach((s, b) => {
        const row = new Array<number>(s.ids.length).fill(0);
        for (let t = 1; t < needed(s); t++) row[t] = data[b * T + t - 1]!;
        out.push(row);
      });
    }
    return out;
  }
}
