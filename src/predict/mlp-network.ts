/**
 * The predictor's network in @jax-js/jax: x → ReLU(x·W₁ + b₁) → … → σ(h·W_L + b_L), trained with
 * Adam on a weighted squared error
 *   L(θ) = Σ_i w_i (σ(z_i) − y_i)² + λ Σ_l ‖W_l‖²,   Σ_i w_i = 1 per minibatch,
 * where y_i are bottom-up tree targets. The output layer starts at zero with bias logit(prior), so an
 * untrained network predicts the prior for every history. Adam (Kingma & Ba):
 *   m ← β₁m + (1−β₁)g,  v ← β₂v + (1−β₂)g²,  θ ← θ − α_t m / (√v + ε),  α_t = α√(1−β₂ᵗ)/(1−β₁ᵗ).
 * One jit-compiled function per shape does forward, backward and the Adam update. Inputs are dense
 * (no gather: its gradient fails under jit here). jax-js arrays are reference counted: every call
 * consumes its arguments, so arrays reused later are passed as `.ref` / `tree.ref(...)`.
 */
import { jit, nn, numpy as np, tree, valueAndGrad } from '../util/jax.ts';
import type { Rng } from '../util/rng.ts';

type Arr = np.Array;
/** Weights and biases of each layer (a jax-js JsTree). */
export type Params = { w: Arr[]; b: Arr[] };

export interface MlpShape {
  input: number;
  hidden: number[];
}

export interface AdamOptions {
  lr: number;
  beta1: number;
  beta2: number;
  eps: number;
  /** λ: L2 penalty on weight matrices. */
  l2: number;
}

const logit = (p: number) => Math.log(p / (1 - p));

/** He-uniform hidden layers from the seeded stream; a zero output layer with bias logit(prior). */
export function initParams(shape: MlpShape, prior: number, rng: Rng): Float32Array[] {
  const sizes = [shape.input, ...shape.hidden, 1];
  const out: Float32Array[] = [];
  for (let l = 0; l + 1 < sizes.length; l++) {
    const [fanIn, fanOut] = [sizes[l], sizes[l + 1]];
    const w = new Float32Array(fanIn * fanOut);
    const last = l + 2 === sizes.length;
    if (!last) {
      const a = Math.sqrt(6 / fanIn);
      for (let i = 0; i < w.length; i++) w[i] = (2 * rng.next() - 1) * a;
    }
    const b = new Float32Array(fanOut);
    if (last) b[0] = logit(prior);
    out.push(w, b);
  }
  return out;
}

/** Flat [W₁, b₁, W₂, b₂, …] buffers ↔ a Params tree. */
export function toParams(flat: readonly Float32Array[], shape: MlpShape): Params {
  const sizes = [shape.input, ...shape.hidden, 1];
  const p: Params = { w: [], b: [] };
  for (let l = 0; l + 1 < sizes.length; l++) {
    p.w.push(np.array(flat[2 * l]).reshape([sizes[l], sizes[l + 1]]));
    p.b.push(np.array(flat[2 * l + 1]));
  }
  return p;
}

/** Copies a Params tree out to flat buffers (does not consume it). */
export function fromParams(p: Params): Float32Array[] {
  const out: Float32Array[] = [];
  for (let l = 0; l < p.w.length; l++) {
    out.push(Float32Array.from(p.w[l].ref.dataSync() as Float32Array), Float32Array.from(p.b[l].ref.dataSync() as Float32Array));
  }
  return out;
}

/** z = the output logit for each row of x ([n, input] → [n]). Consumes p and x. */
export function logits(p: Params, x: Arr): Arr {
  let h = x;
  const L = p.w.length;
  for (let l = 0; l < L; l++) {
    const z = np.matmul(h, p.w[l]).add(p.b[l]);
    h = l + 1 < L ? nn.relu(z) : z;
  }
  return h.reshape([-1]);
}

/** Ṽ = σ(z). Consumes p and x. */
export function forward(p: Params, x: Arr): Arr {
  return nn.sigmoid(logits(p, x));
}

/** L(θ) from the module comment. Consumes every argument. */
export function loss(p: Params, x: Arr, y: Arr, w: Arr, l2: number): Arr {
  const penalty =
    l2 > 0
      ? p.w
          .map((W) => W.ref.mul(W.ref).sum())
          .reduce((a, b) => a.add(b))
          .mul(l2)
      : undefined;
  const d = forward({ w: p.w, b: p.b }, x).sub(y);
  const data = d.ref.mul(d).mul(w).sum();
  return penalty ? data.add(penalty) : data;
}

/** One jit-compiled Adam step: (θ, m, v, x, y, w, α_t) → [θ', m', v', L]. Consumes θ, m, v and the batch. */
export function makeAdamStep(opts: AdamOptions) {
  const { beta1, beta2, eps, l2 } = opts;
  return jit((p: Params, m: Params, v: Params, x: Arr, y: Arr, w: Arr, alpha: Arr) => {
    const [value, g] = valueAndGrad((q: Params) => loss(q, x, y, w, l2))(tree.ref(p));
    const m2 = tree.map((mi: Arr, gi: Arr) => mi.mul(beta1).add(gi.mul(1 - beta1)), m, tree.ref(g)) as Params;
    const v2 = tree.map((vi: Arr, gi: Arr) => vi.mul(beta2).add(gi.ref.mul(gi).mul(1 - beta2)), v, g) as Params;
    const p2 = tree.map((pi: Arr, mi: Arr, vi: Arr) => pi.sub(mi.mul(alpha.ref).div(np.sqrt(vi).add(eps))), p, tree.ref(m2), tree.ref(v2)) as Params;
    alpha.dispose();
    return [p2, m2, v2, value] as [Params, Params, Params, Arr];
  });
}

/** Zero arrays shaped like p (Adam's m and v). Does not consume p. */
export function zerosLike(p: Params): Params {
  return tree.map((a: Arr) => np.zeros(a.shape), p) as Params;
}

/** Value and gradient of L at θ, as plain buffers (for gradient checks). Consumes nothing. */
export function lossAndGrad(p: Params, x: Float32Array, y: Float32Array, w: Float32Array, l2: number): { value: number; grad: Float32Array[] } {
  const n = y.length;
  const fn = (q: Params) => loss(q, np.array(x).reshape([n, -1]), np.array(y), np.array(w), l2);
  const [value, g] = valueAndGrad(fn)(tree.ref(p));
  const grad = fromParams(g as Params);
  tree.dispose(g);
  return { value: (value.dataSync() as Float32Array)[0], grad };
}
