/**
 * Training the llama weights in jax-js. Two losses over the trainable tokens (mask 1), each averaged
 * over the minibatch's trainable tokens:
 *   supervised   L = −Σ mask·log π(t)/Σ mask
 *   PPO          L = −Σ mask·min(ρA, clip(ρ, 1 − ε, 1 + ε)A)/Σ mask,  ρ = exp(log π(t) − log π_old(t))
 * with A the token's advantage (its turn's tree-aware advantage) and log π_old the probability
 * llama.cpp sampled it with. Adam: m ← β₁m + (1−β₁)g, v ← β₂v + (1−β₂)g², θ ← θ − α_t m/(√v + ε_A),
 * α_t = α√(1−β₂ᵗ)/(1−β₁ᵗ), after clipping the gradient's global norm.
 *
 * Speed and memory: a minibatch's sequences are packed (forward.ts `pack`) into grids of R × T
 * positions, T the smallest row length of a fixed ladder (128, 256, 512, …, the context) that holds the
 * longest sequence and R = ⌊tokens / T⌋, so only a handful of shapes is ever compiled. One jit program
 * per (loss, T) computes the loss and its gradient; a minibatch larger than one grid adds the grids'
 * gradients on the device; one jit program applies clipping and Adam. The programs are shared by all
 * trainers of one model shape in the process (the next run does not trace them again). Fixed shapes
 * also keep jax-js's wasm heap flat: its allocator reuses freed buffers only of the same size class.
 */
import { JAX_THREADS, jit, lax, numpy as np, tree, valueAndGrad } from '../util/jax.ts';
import {
  disposeConsts,
  forwardConsts,
  fromParams,
  gridArrays,
  pack,
  toParams,
  tokenLogprobs,
  type ForwardConsts,
  type PackedGrid,
  type Params,
} from './forward.ts';
import type { LlamaConfig, LlamaModel, LlamaWeights } from './model.ts';
import type { TokenSequence } from './sequence.ts';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { UserError } from '../util/user-error.ts';

/**
 * A step whose gradient or new weights are not finite (NaN or ±∞: advantages or log-probabilities that
 * overflow float32, a learning rate that throws the weights past it). The step is not taken: weights,
 * moments and the step count stay as they were. A UserError: the embedded policy's run ends with its
 * one line (a learning rate to lower), and `serve --tinker` answers it as the client's.
 */
export class NonFiniteUpdateError extends UserError {
  override name = 'NonFiniteUpdateError';
}

type Arr = np.Array;

export interface TrainerOptions {
  /** Sequences per minibatch (one Adam step) when callers split a list into minibatches. Default 8. */
  batch?: number;
  /**
   * Positions per packed grid (R·T); a minibatch needing more is several grids, one Adam step. Default
   * 4096 on one thread, 2048 on the kernel-thread pool (which holds a grid's whole gradient program in
   * the 4 GiB heap at once; util/wasm-threads.ts).
   */
  gridTokens?: number;
  /** Gradient global-norm cap. Default 1. */
  maxGradNorm?: number;
  beta1?: number;
  beta2?: number;
  /**
   * Temperature τ of the policy's sampling: log π is log softmax(logits / τ) everywhere (PPO's ratio
   * against the log-probs llama.cpp sampled with, `logprobs`). Default 1. Supervised training uses it
   * too, so keep 1 there.
   */
  temperature?: number;
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

/**
 * PPO ratio statistics of a pass over trained tokens, from the loss's own forward pass (each grid's
 * log π before its Adam step, as the embedded policy and common PPO implementations measure them).
 */
export interface RatioStats {
  /** Share of trained tokens whose ratio π/π_old lies outside [1 − clip, 1 + clip]. */
  clipFraction: number;
  /** Mean of log π_old − log π over trained tokens. */
  approxKl: number;
}

/** [ids, targets, pos, start, weight, adv, old]: the grid's device arrays. */
type GridInput = Arr[];
/** [[loss, log π of each position's target (the loss's own forward pass)], gradient]. */
type GradFn = (p: Params, batch: GridInput, k: ForwardConsts) => [[Arr, Arr], Params];
/** The new weights and moments, and a scalar that is finite exactly when the gradient and the new weights are. */
type AdamFn = (p: Params, m: Params, v: Params, g: Params, alpha: Arr) => [Params, Params, Params, Arr];
type EvalFn = (p: Params, batch: Arr[], k: ForwardConsts) => Arr;

/** Positions a sequence needs: through its last mask-1 token (all, when none is masked in), minus one (the last token is only a target). */
function positions(seq: TokenSequence): number {
  const last = seq.mask.lastIndexOf(1);
  return (last < 0 ? seq.ids.length : last + 1) - 1;
}

/** Whether token t of the row is trained on: generated (mask 1) and, with advantages, carrying one. */
function trained(r: TrainRow, t: number): boolean {
  return r.seq.mask[t] === 1 && (!r.advantages || r.advantages[t] !== 0);
}

function trainedCount(r: TrainRow): number {
  let n = 0;
  for (let t = 1; t < r.seq.ids.length; t++) if (trained(r, t)) n++;
  return n;
}

/** Running sums behind {@link RatioStats}. */
interface RatioSums {
  clipped: number;
  kl: number;
  n: number;
}

function ratioStats(s: RatioSums): RatioStats {
  return { clipFraction: s.n ? s.clipped / s.n : 0, approxKl: s.n ? s.kl / s.n : 0 };
}

/** Adds a grid's trained tokens to the ratio sums; logp[at] is log π of the token after position at. */
function addRatios(sums: RatioSums, grid: PackedGrid, rows: readonly TrainRow[], logp: Float32Array, clip: number): void {
  for (const s of grid.slots) {
    const r = rows[s.index]!;
    for (let t = 0; t < s.length; t++) {
      if (!trained(r, t + 1)) continue;
      const diff = logp[s.row * grid.T + s.offset + t]! - r.seq.logprobs[t + 1]!;
      const ratio = Math.exp(diff);
      if (ratio < 1 - clip || ratio > 1 + clip) sums.clipped++;
      sums.kl -= diff;
      sums.n++;
    }
  }
}

/**
 * The process's jit functions, by what they compute (loss kind, clip, model config; Adam's constants).
 * jax-js traces a jit function once per argument shapes and caches the trace on the function (the
 * compiled kernels it caches process-wide by the trace's hash), so sharing the functions lets a new
 * trainer of the same shape — the next run in a process — skip tracing the forward and backward pass
 * again. They live as long as the process: a handful per model shape, holding only small constants
 * (index ranges of the attention chunks).
 */
const programs = new Map<string, unknown>();

function program<F>(key: string, make: () => F): F {
  let fn = programs.get(key) as F | undefined;
  if (!fn) {
    fn = make();
    programs.set(key, fn);
  }
  return fn;
}

/** Row lengths the trainer compiles for: powers of two from 128 below the context, then the context. */
export function rowLadder(context: number): number[] {
  const out: number[] = [];
  for (let t = 128; t < context; t *= 2) out.push(t);
  return [...out, context];
}

export class LmTrainer {
  readonly config: LlamaConfig;
  private params: Params;
  private m: Params;
  private v: Params;
  private t = 0;
  private readonly consts: ForwardConsts;
  readonly opts: Required<TrainerOptions>;

  constructor(model: Pick<LlamaModel, 'config' | 'weights'>, options: TrainerOptions = {}) {
    this.config = model.config;
    this.opts = { batch: 8, gridTokens: JAX_THREADS > 1 ? 2048 : 4096, maxGradNorm: 1, beta1: 0.9, beta2: 0.999, temperature: 1, ...options };
    if (!(this.opts.temperature > 0 && Number.isFinite(this.opts.temperature)))
      throw new RangeError(`LmTrainer: temperature must be a positive number, got ${this.opts.temperature}`);
    this.params = toParams(model.weights, model.config);
    this.m = tree.map((a: Arr) => np.zeros(a.shape), this.params) as Params;
    this.v = tree.map((a: Arr) => np.zeros(a.shape), this.params) as Params;
    this.consts = forwardConsts(model.config);
  }

  /** Adam steps taken. */
  get updates(): number {
    return this.t;
  }

  /** Current weights as plain arrays. */
  weights(): LlamaWeights {
    return fromParams(this.params, this.config);
  }

  /** Adam moments and step count, for checkpoints. */
  optimizerState(): { t: number; m: LlamaWeights; v: LlamaWeights } {
    return { t: this.t, m: fromParams(this.m, this.config), v: fromParams(this.v, this.config) };
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

  /** Row length of the ladder that holds `longest` positions. */
  private rowLength(longest: number): number {
    if (longest > this.config.context) throw new RangeError(`a sequence needs ${longest + 1} tokens; the model's context is ${this.config.context}`);
    return rowLadder(this.config.context).find((t) => t >= longest)!;
  }

  private gradFn(kind: 'sft' | 'ppo', clip: number): GradFn {
    // ε and τ are constants of the compiled function, so they are part of the key.
    return program(`grad:${kind}:${clip}:${this.opts.temperature}:${JSON.stringify(this.config)}`, () => this.makeGradFn(kind, clip));
  }

  private makeGradFn(kind: 'sft' | 'ppo', clip: number): GradFn {
    const c = this.config;
    const tau = this.opts.temperature;
    const loss = (q: Params, batch: GridInput, k: ForwardConsts): [Arr, Arr] => {
      const [ids, targets, pos, start, weight, adv, old] = batch as [Arr, Arr, Arr, Arr, Arr, Arr, Arr];
      const logp = tokenLogprobs(q, ids, targets, pos, start, k, c, tau);
      // log π is also returned (auxiliary, no gradient): callers read PPO's ratio statistics from it
      // instead of running a second forward pass.
      const aux = lax.stopGradient(logp.ref);
      if (kind === 'sft') {
        adv.dispose();
        old.dispose();
        return [logp.mul(weight).sum().neg(), aux];
      }
      const ratio = np.exp(logp.sub(old));
      const s1 = ratio.ref.mul(adv.ref);
      const s2 = np.clip(ratio, 1 - clip, 1 + clip).mul(adv);
      return [np.minimum(s1, s2).mul(weight).sum().neg(), aux];
    };
    return jit((p: Params, batch: GridInput, k: ForwardConsts) => valueAndGrad((q: Params) => loss(q, batch, k), { hasAux: true })(p)) as unknown as GradFn;
  }

  private adam(): AdamFn {
    const { beta1, beta2, maxGradNorm } = this.opts;
    const squares = (t: Params): Arr => (tree.leaves(tree.ref(t)) as Arr[]).map((a) => a.ref.mul(a).sum()).reduce((a, b) => a.add(b));
    return program(
      `adam:${beta1}:${beta2}:${maxGradNorm}`,
      () =>
        jit((p: Params, m: Params, v: Params, g: Params, alpha: Arr) => {
          const sq = squares(g);
          const gradSquares = sq.ref;
          const shrink = np.minimum(np.reciprocal(np.sqrt(sq).add(1e-12)).mul(maxGradNorm), 1);
          const gc = tree.map((gi: Arr) => gi.mul(shrink.ref), g) as Params;
          shrink.dispose();
          const m2 = tree.map((mi: Arr, gi: Arr) => mi.mul(beta1).add(gi.mul(1 - beta1)), m, tree.ref(gc)) as Params;
          const v2 = tree.map((vi: Arr, gi: Arr) => vi.mul(beta2).add(gi.ref.mul(gi).mul(1 - beta2)), v, gc) as Params;
          const p2 = tree.map((pi: Arr, mi: Arr, vi: Arr) => pi.sub(mi.mul(alpha.ref).div(np.sqrt(vi).add(1e-8))), p, tree.ref(m2), tree.ref(v2)) as Params;
          alpha.dispose();
          // One scalar for the caller's check: NaN or ∞ when any gradient or new weight is (or the sum overflows).
          return [p2, m2, v2, gradSquares.add(squares(p2))];
        }) as unknown as AdamFn,
    );
  }

  /** The grid's per-position loss inputs: weight (1/total on trained tokens), advantage, old log-prob. */
  private lossArrays(grid: PackedGrid, rows: readonly TrainRow[], total: number): Arr[] {
    const n = grid.R * grid.T;
    const weight = new Float32Array(n);
    const adv = new Float32Array(n);
    const old = new Float32Array(n);
    for (const s of grid.slots) {
      const r = rows[s.index]!;
      // Position t predicts token t+1: the loss on token t+1 sits at t.
      for (let t = 0; t < s.length; t++) {
        if (!trained(r, t + 1)) continue;
        const at = s.row * grid.T + s.offset + t;
        weight[at] = 1 / total;
        adv[at] = r.advantages ? r.advantages[t + 1]! : 1;
        old[at] = r.seq.logprobs[t + 1]!;
      }
    }
    const shape = [grid.R, grid.T];
    return [np.array(weight).reshape(shape), np.array(adv).reshape(shape), np.array(old).reshape(shape)];
  }

  /**
   * One Adam step on the gradient summed over the grids (each token weighted 1/total). `ratios`, when
   * given, accumulates the PPO ratio statistics of the trained tokens from the loss's own forward pass.
   * Reads are asynchronous, so the kernels run on jax-js's thread pool (util/wasm-threads.ts); it
   * returns once the new weights and moments are computed, so synchronous readers (`weights`,
   * `logprobs`) may follow.
   */
  private async update(
    kind: 'sft' | 'ppo',
    grids: readonly PackedGrid[],
    rows: readonly TrainRow[],
    total: number,
    lr: number,
    clip: number,
    ratios?: RatioSums,
  ): Promise<number> {
    let g: Params | undefined;
    let loss = 0;
    for (const grid of grids) {
      const [[value, logp], gi] = this.gradFn(kind, clip)(
        tree.ref(this.params),
        [...gridArrays(grid), ...this.lossArrays(grid, rows, total)],
        tree.ref(this.consts),
      );
      loss += ((await value.data()) as Float32Array)[0]!;
      if (ratios) addRatios(ratios, grid, rows, (await logp.data()) as Float32Array, clip);
      else logp.dispose();
      g = g ? (tree.map((a: Arr, b: Arr) => a.add(b), g, gi) as Params) : gi;
      // Each grid is a long computation on one thread: the sum is computed now (not all at once at the
      // Adam step), and the server answers health checks and other runs between grids.
      await Promise.all((tree.leaves(g) as Arr[]).map((a) => a.blockUntilReady()));
      await nextTurn();
    }
    const t = this.t + 1;
    const { beta1, beta2 } = this.opts;
    const alpha = np.array(new Float32Array([(lr * Math.sqrt(1 - beta2 ** t)) / (1 - beta1 ** t)])).reshape([]);
    // The old state is kept (by reference) until the new one is known to be finite.
    const [params, m, v, check] = this.adam()(tree.ref(this.params), tree.ref(this.m), tree.ref(this.v), g!, alpha);
    const squares = ((await check.data()) as Float32Array)[0]!;
    if (!Number.isFinite(squares)) {
      tree.dispose([params, m, v]);
      throw new NonFiniteUpdateError(
        `the step's gradient or new weights are not finite (advantages, log-probabilities or learning rate ${lr} overflow float32); the weights are unchanged`,
      );
    }
    tree.dispose([this.params, this.m, this.v]);
    [this.params, this.m, this.v, this.t] = [params, m, v, t];
    await Promise.all((tree.leaves([this.params, this.m, this.v]) as Arr[]).map((a) => a.blockUntilReady()));
    return loss;
  }

  /** Rows with trainable tokens, each with the positions it needs. */
  private usable(rows: readonly TrainRow[]): { used: TrainRow[]; lengths: number[]; counts: number[] } {
    const used = rows.filter((r) => trainedCount(r) > 0);
    return { used, lengths: used.map((r) => positions(r.seq)), counts: used.map(trainedCount) };
  }

  /**
   * One Adam step of size `lr` on all the rows (PPO clips the ratio to [1 − clip, 1 + clip]): the
   * gradient of the loss summed over trained tokens and divided by `divisor` (default: their number,
   * the mean; the policy's `normalise` chooses another), summed over as many packed grids as the
   * rows need (rows of one length, the longest row's). This is a PPO pass: a group's rows
   * must share one step (grids follow length, and length follows the outcome). Rows without trainable
   * tokens contribute nothing. PPO's ratio statistics come from the loss's own forward pass.
   */
  async step(kind: 'sft' | 'ppo', rows: readonly TrainRow[], lr: number, clip = 0.2, divisor?: number): Promise<BatchStats & RatioStats> {
    const { used, lengths, counts } = this.usable(rows);
    const tokens = counts.reduce((a, b) => a + b, 0);
    if (tokens === 0) return { loss: 0, tokens: 0, clipFraction: 0, approxKl: 0 };
    if (divisor !== undefined && !(divisor > 0)) throw new RangeError(`divisor must be positive, got ${divisor}`);
    // One row length per step (the longest row's): with the ladder, each step would add its own mix of
    // grid shapes, and jax-js's heap (4 GiB, reused only per size class) ran out after ~30 RL steps.
    const grids = pack(
      used.map((r) => r.seq.ids),
      lengths,
      { rowLengths: [this.rowLength(Math.max(...lengths))], gridTokens: this.opts.gridTokens },
    );
    const ratios: RatioSums = { clipped: 0, kl: 0, n: 0 };
    const loss = await this.update(kind, grids, used, divisor ?? tokens, lr, clip, kind === 'ppo' ? ratios : undefined);
    return { loss, tokens, ...ratioStats(ratios) };
  }

  /**
   * One pass over the rows with one Adam step per packed grid (about `gridTokens` positions each; rows
   * of a grid have similar lengths). Grids run in the order `order` gives (default: as packed); the
   * learning rate may depend on the step's index in the pass; `after` sees each step and may stop the
   * pass by returning true. Returns the loss averaged over trained tokens, the tokens and the steps taken.
   * For supervised passes (the warm start); an RL pass is one `step`, so a group's rows share one step.
   */
  async fit(
    kind: 'sft' | 'ppo',
    rows: readonly TrainRow[],
    lr: number | ((step: number, steps: number) => number),
    options: {
      clip?: number;
      order?: (n: number) => number[];
      after?: (info: { step: number; steps: number; loss: number; tokens: number }) => boolean | void;
    } = {},
  ): Promise<BatchStats & RatioStats & { steps: number }> {
    const { used, lengths, counts } = this.usable(rows);
    if (used.length === 0) return { loss: 0, tokens: 0, steps: 0, clipFraction: 0, approxKl: 0 };
    const grids = pack(
      used.map((r) => r.seq.ids),
      lengths,
      { rowLengths: rowLadder(this.config.context), gridTokens: this.opts.gridTokens },
    );
    const clip = options.clip ?? 0.2;
    const ratios: RatioSums = { clipped: 0, kl: 0, n: 0 };
    let loss = 0;
    let tokens = 0;
    let step = 0;
    for (const i of options.order?.(grids.length) ?? grids.map((_, i) => i)) {
      const grid = grids[i]!;
      const total = grid.slots.reduce((n, s) => n + counts[s.index]!, 0);
      const l = await this.update(kind, [grid], used, total, typeof lr === 'number' ? lr : lr(step, grids.length), clip, kind === 'ppo' ? ratios : undefined);
      loss += l * total;
      tokens += total;
      step++;
      if (options.after?.({ step, steps: grids.length, loss: l, tokens: total })) break;
    }
    return { loss: loss / tokens, tokens, steps: step, ...ratioStats(ratios) };
  }

  /**
   * Frees the weights, Adam moments and constants (jax-js's wasm heap is 4 GiB per process). The
   * compiled programs stay for the next trainer of the same shape (see {@link program}).
   */
  dispose(): void {
    tree.dispose(this.params);
    tree.dispose(this.m);
    tree.dispose(this.v);
    disposeConsts(this.consts);
  }

  /**
   * log π(t_{i+1} | t_{≤i}) of each row under the current weights (index 0 gets 0). Tokens after a
   * row's last generated token (mask 1) are not evaluated and get 0; a row with no mask gets all of
   * its tokens evaluated.
   */
  logprobs(rows: readonly TokenSequence[]): number[][] {
    const pass = this.logprobPass(rows);
    for (;;) {
      const r = pass.next();
      if (r.done) return r.value;
    }
  }

  /** {@link logprobs}, letting the event loop run between grids (a server's health checks and other runs). */
  async logprobsYielding(rows: readonly TokenSequence[]): Promise<number[][]> {
    const pass = this.logprobPass(rows);
    for (;;) {
      const r = pass.next();
      if (r.done) return r.value;
      await nextTurn();
    }
  }

  /** The pass behind {@link logprobs}: it yields after each grid. */
  private *logprobPass(rows: readonly TokenSequence[]): Generator<void, number[][]> {
    const out = rows.map((s) => new Array<number>(s.ids.length).fill(0));
    const lengths = rows.map(positions);
    const live = lengths.map((n, k) => k).filter((k) => lengths[k]! > 0);
    if (live.length === 0) return out;
    const T = this.rowLength(Math.max(...live.map((k) => lengths[k]!)));
    const c = this.config;
    const tau = this.opts.temperature;
    const fn = program(
      `eval:${tau}:${JSON.stringify(c)}`,
      () => jit((p: Params, b: Arr[], k: ForwardConsts) => tokenLogprobs(p, b[0]!, b[1]!, b[2]!, b[3]!, k, c, tau)) as unknown as EvalFn,
    );
    for (const grid of pack(
      live.map((k) => rows[k]!.ids),
      live.map((k) => lengths[k]!),
      { rowLengths: [T], gridTokens: this.opts.gridTokens },
    )) {
      const data = fn(tree.ref(this.params), gridArrays(grid), tree.ref(this.consts)).dataSync() as Float32Array;
      for (const s of grid.slots) {
        const row = out[live[s.index]!]!;
        for (let t = 0; t < s.length; t++) row[t + 1] = data[s.row * grid.T + s.offset + t]!;
      }
      yield;
    }
    return out;
  }
}
