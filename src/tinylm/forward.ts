/**
 * The llama forward pass in @jax-js/jax, written to reproduce llama.cpp's numbers for `llama` GGUFs:
 *   x₀ = E[token]                                   (one-hot · E: a gather's gradient fails under jit)
 *   per layer:  h = RMSNorm(x)·w_attn,  q,k,v = h·W_qᵀ, h·W_kᵀ, h·W_vᵀ,  RoPE(q), RoPE(k) on adjacent
 *               pairs (x₂ᵢ, x₂ᵢ₊₁) by angle p·base^(−2i/d_head),  a = softmax(q·kᵀ/√d_head + causal)·v,
 *               x ← x + a·W_oᵀ,  h = RMSNorm(x)·w_ffn,  x ← x + (silu(h·W_gᵀ) ⊙ h·W_uᵀ)·W_dᵀ
 *   logits = RMSNorm(x)·w_out · W_outᵀ,   RMSNorm(x) = x / √(mean(x²) + ε)
 * and the per-token log-probabilities log π(t_{i+1} | t_{≤i}) = log_softmax(logits_i)[t_{i+1}].
 * jax-js arrays are reference counted: a function consumes its arguments, `.ref` keeps one alive.
 */
import { nn, numpy as np } from '@jax-js/jax';
import type { LayerWeights, LlamaConfig, LlamaWeights } from './model.ts';

type Arr = np.Array;

export type LayerParams = {
  attnNorm: Arr;
  wq: Arr;
  wk: Arr;
  wv: Arr;
  wo: Arr;
  ffnNorm: Arr;
  gate: Arr;
  up: Arr;
  down: Arr;
};

/** The model's weights as a jax-js tree (matrices (out, in)). */
export type Params = {
  embed: Arr;
  layers: LayerParams[];
  outNorm: Arr;
  output: Arr;
};

export function toParams(w: LlamaWeights, c: LlamaConfig): Params {
  const m = (data: Float32Array, rows: number, cols: number) => np.array(data).reshape([rows, cols]);
  return {
    embed: m(w.embed, c.vocab, c.dim),
    outNorm: np.array(w.outNorm),
    output: m(w.output, c.vocab, c.dim),
    layers: w.layers.map((l) => ({
      attnNorm: np.array(l.attnNorm),
      wq: m(l.wq, c.dim, c.dim),
      wk: m(l.wk, c.dim, c.dim),
      wv: m(l.wv, c.dim, c.dim),
      wo: m(l.wo, c.dim, c.dim),
      ffnNorm: np.array(l.ffnNorm),
      gate: m(l.gate, c.ffn, c.dim),
      up: m(l.up, c.ffn, c.dim),
      down: m(l.down, c.dim, c.ffn),
    })),
  };
}

const copy = (a: Arr) => Float32Array.from(a.ref.dataSync() as Float32Array);

/** Copies the tree out to plain weights (does not consume it). */
export function fromParams(p: Params): LlamaWeights {
  return {
    embed: copy(p.embed),
    outNorm: copy(p.outNorm),
    output: copy(p.output),
    layers: p.layers.map((l) => Object.fromEntries(Object.entries(l).map(([k, v]) => [k, copy(v as Arr)])) as unknown as LayerWeights),
  };
}

/** y = x·Wᵀ. */
const linear = (x: Arr, w: Arr) => np.matmul(x, np.matrixTranspose(w));

/** RMSNorm(x)·w over the last axis. */
function rmsNorm(x: Arr, w: Arr, eps: number): Arr {
  const ms = np.mean(x.ref.mul(x.ref), -1, { keepdims: true });
  return x.mul(np.reciprocal(np.sqrt(ms.add(eps)))).mul(w);
}

/**
 * cos and sin of the RoPE angles, [T, 1, d_head] (each pair's angle repeated), computed in f32 the
 * way llama.cpp does (θ ← θ·base^(−2/d) per pair), and P, the [d_head, d_head] matrix with
 * (x·P)₂ᵢ = −x₂ᵢ₊₁, (x·P)₂ᵢ₊₁ = x₂ᵢ, so RoPE(x) = x⊙cos + (x·P)⊙sin.
 */
export function ropeTables(T: number, headDim: number, base: number): { cos: Float32Array; sin: Float32Array; rot: Float32Array } {
  const cos = new Float32Array(T * headDim);
  const sin = new Float32Array(T * headDim);
  const scale = Math.fround(Math.pow(base, -2 / headDim));
  for (let p = 0; p < T; p++) {
    let theta = Math.fround(p);
    for (let i = 0; i < headDim / 2; i++) {
      const c = Math.fround(Math.cos(theta));
      const s = Math.fround(Math.sin(theta));
      cos[p * headDim + 2 * i] = cos[p * headDim + 2 * i + 1] = c;
      sin[p * headDim + 2 * i] = sin[p * headDim + 2 * i + 1] = s;
      theta = Math.fround(theta * scale);
    }
  }
  const rot = new Float32Array(headDim * headDim);
  for (let i = 0; i < headDim / 2; i++) {
    rot[(2 * i + 1) * headDim + 2 * i] = -1; // column 2i takes −x₂ᵢ₊₁
    rot[2 * i * headDim + 2 * i + 1] = 1; // column 2i+1 takes x₂ᵢ
  }
  return { cos, sin, rot };
}

/** Constant inputs of a [B, T] forward (built outside jit and passed in). */
export type ForwardConsts = {
  cos: Arr;
  sin: Arr;
  rot: Arr;
  /** [T, T]: 0 on and below the diagonal, −1e9 above. */
  causal: Arr;
};

export function forwardConsts(c: LlamaConfig, T: number): ForwardConsts {
  const hd = c.dim / c.heads;
  const { cos, sin, rot } = ropeTables(T, hd, c.ropeBase);
  const causal = new Float32Array(T * T);
  for (let i = 0; i < T; i++) for (let j = i + 1; j < T; j++) causal[i * T + j] = -1e9;
  return {
    cos: np.array(cos).reshape([T, 1, hd]),
    sin: np.array(sin).reshape([T, 1, hd]),
    rot: np.array(rot).reshape([hd, hd]),
    causal: np.array(causal).reshape([T, T]),
  };
}

export function disposeConsts(k: ForwardConsts): void {
  k.cos.dispose();
  k.sin.dispose();
  k.rot.dispose();
  k.causal.dispose();
}

/** logits [B, T, V] for one-hot inputs [B, T, V]. Consumes p, onehot and k. */
export function logits(p: Params, onehot: Arr, k: ForwardConsts, c: LlamaConfig): Arr {
  const [B, T] = onehot.shape as [number, number, number];
  const H = c.heads;
  const hd = c.dim / H;
  const rope = (x: Arr) => x.ref.mul(k.cos.ref).add(np.matmul(x, k.rot.ref).mul(k.sin.ref));
  const heads = (x: Arr) => np.transpose(x.reshape([B, T, H, hd]), [0, 2, 1, 3]);
  let x = np.matmul(onehot, p.embed);
  for (const l of p.layers) {
    const h = rmsNorm(x.ref, l.attnNorm, c.eps);
    const q = heads(rope(linear(h.ref, l.wq).reshape([B, T, H, hd])));
    const kk = heads(rope(linear(h.ref, l.wk).reshape([B, T, H, hd])));
    const v = heads(linear(h, l.wv));
    const scores = np.matmul(q, np.transpose(kk, [0, 1, 3, 2])).mul(1 / Math.sqrt(hd)).add(k.causal.ref);
    const att = np.matmul(nn.softmax(scores, -1), v);
    x = x.add(linear(np.transpose(att, [0, 2, 1, 3]).reshape([B, T, c.dim]), l.wo));
    const g = rmsNorm(x.ref, l.ffnNorm, c.eps);
    x = x.add(linear(nn.silu(linear(g.ref, l.gate)).mul(linear(g, l.up)), l.down));
  }
  disposeConsts(k);
  return linear(rmsNorm(x, p.outNorm, c.eps), p.output);
}

/** log π(target_t) [B, T] for one-hot inputs and one-hot targets [B, T, V]. Consumes everything. */
export function tokenLogprobs(p: Params, onehot: Arr, targets: Arr, k: ForwardConsts, c: LlamaConfig): Arr {
  return nn.logSoftmax(logits(p, onehot, k, c), -1).mul(targets).sum(-1);
}

/** One-hot [B, T, V] of ids (rows padded with −1 are all zero). */
export function oneHot(rows: readonly (readonly number[])[], T: number, V: number): Arr {
  const out = new Float32Array(rows.length * T * V);
  rows.forEach((ids, b) => ids.forEach((id, t) => {
    if (t < T && id >= 0) out[(b * T + t) * V + id] = 1;
  }));
  return np.array(out).reshape([rows.length, T, V]);
}
