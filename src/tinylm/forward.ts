/**
 * The llama forward pass in @jax-js/jax, written to reproduce llama.cpp's numbers for `llama` GGUFs:
 *   x₀ = E[token]                                   (a gather; its gradient is a scatter-add)
 *   per layer:  h = RMSNorm(x)·w_attn,  q,k,v = h·W_qᵀ, h·W_kᵀ, h·W_vᵀ,  RoPE(q), RoPE(k) on adjacent
 *               pairs (x₂ᵢ, x₂ᵢ₊₁) by angle p·base^(−2i/d_head),  a = softmax(q·kᵀ/√d_head + mask)·v,
 *               x ← x + a·W_oᵀ,  h = RMSNorm(x)·w_ffn,  x ← x + (silu(h·W_gᵀ) ⊙ h·W_uᵀ)·W_dᵀ
 *   logits = RMSNorm(x)·w_out · W_outᵀ,   RMSNorm(x) = x / √(mean(x²) + ε)
 * and the per-token log-probabilities log π(t_{i+1} | t_{≤i}) = logits_i[t_{i+1}] − logsumexp(logits_i).
 *
 * Batches are packed (see {@link pack}): a [R, T] grid whose rows hold whole sequences back to back.
 * Each position carries its position inside its own sequence (RoPE restarts at 0 per sequence) and
 * the row index where its sequence starts, so attention is causal and block-diagonal: position i sees
 * j with start_i ≤ j ≤ i. A packed sequence therefore gets exactly the numbers it gets alone.
 *
 * The vocabulary dimension is padded to a multiple of 32 inside the trainer (jax-js's wasm matmul is
 * ~15× slower for an odd output width such as 833); padded logits get −1e9, so they carry no mass.
 * jax-js arrays are reference counted: a function consumes its arguments, `.ref` keeps one alive.
 */
import { lax, nn, numpy as np } from '../util/jax.ts';
import type { LayerWeights, LlamaConfig, LlamaWeights } from './model.ts';

type Arr = np.Array;
const { stopGradient } = lax;

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

/** The model's weights as a jax-js tree (matrices (out, in); embed and output padded to {@link paddedVocab} rows). */
export type Params = {
  embed: Arr;
  layers: LayerParams[];
  outNorm: Arr;
  output: Arr;
};

/** Rows of the trainer's embedding and output matrices: the vocabulary rounded up to a multiple of 32. */
export function paddedVocab(vocab: number): number {
  return Math.ceil(vocab / 32) * 32;
}

function padRows(data: Float32Array, rows: number, cols: number): Float32Array {
  const out = new Float32Array(rows * cols);
  out.set(data.subarray(0, Math.min(data.length, rows * cols)));
  return out;
}

export function toParams(w: LlamaWeights, c: LlamaConfig): Params {
  const m = (data: Float32Array, rows: number, cols: number) => np.array(data).reshape([rows, cols]);
  const Vp = paddedVocab(c.vocab);
  return {
    embed: m(padRows(w.embed, Vp, c.dim), Vp, c.dim),
    outNorm: np.array(w.outNorm),
    output: m(padRows(w.output, Vp, c.dim), Vp, c.dim),
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

/** Copies the tree out to plain weights, dropping the vocabulary padding (does not consume it). */
export function fromParams(p: Params, c: LlamaConfig): LlamaWeights {
  const rows = (a: Arr) => copy(a).slice(0, c.vocab * c.dim);
  return {
    embed: rows(p.embed),
    outNorm: copy(p.outNorm),
    output: rows(p.output),
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
 * cos and sin of the RoPE angles, [positions, d_head] (each pair's angle repeated), computed in f32
 * the way llama.cpp does (θ ← θ·base^(−2/d) per pair), and P, the [d_head, d_head] matrix with
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

/** Constants of the model's forward pass, built once per trainer and passed into each jit call by `.ref`. */
export type ForwardConsts = {
  /** [context, d_head] RoPE tables, gathered by position. */
  cos: Arr;
  sin: Arr;
  rot: Arr;
  /** [V_padded]: 0 for real tokens, −1e9 for the padding rows. */
  vocabBias: Arr;
};

export function forwardConsts(c: LlamaConfig): ForwardConsts {
  const hd = c.dim / c.heads;
  const { cos, sin, rot } = ropeTables(c.context, hd, c.ropeBase);
  const bias = new Float32Array(paddedVocab(c.vocab)).fill(-1e9, c.vocab);
  return {
    cos: np.array(cos).reshape([c.context, hd]),
    sin: np.array(sin).reshape([c.context, hd]),
    rot: np.array(rot).reshape([hd, hd]),
    vocabBias: np.array(bias),
  };
}

export function disposeConsts(k: ForwardConsts): void {
  k.cos.dispose();
  k.sin.dispose();
  k.rot.dispose();
  k.vocabBias.dispose();
}

/**
 * A packed grid as host arrays: R rows × T positions. `ids` are the inputs, `targets` the next tokens,
 * `pos` each position's index inside its own sequence, `start` the row index where its sequence begins
 * (padding positions start at themselves: they see only themselves). `slots[k]` says where a sequence
 * landed: its index in the input, row, offset, length (positions used).
 */
export interface PackedGrid {
  R: number;
  T: number;
  ids: Int32Array;
  targets: Int32Array;
  pos: Int32Array;
  start: Int32Array;
  slots: Array<{ index: number; row: number; offset: number; length: number }>;
}

/**
 * Packs sequences into grids. Sequence k occupies `lengths[k]` positions: inputs ids[0..n−1], targets
 * ids[1..n]. First-fit decreasing: each sequence, longest first, goes into the first open row with room,
 * else opens a row of the shortest length in `rowLengths` that holds it. Rows of one length are
 * grouped into grids of R = ⌊gridTokens / T⌋ rows (the last grid of a length may be partly empty).
 */
export function pack(
  seqs: readonly (readonly number[])[],
  lengths: readonly number[],
  layout: { rowLengths: readonly number[]; gridTokens: number },
): PackedGrid[] {
  const ladder = [...layout.rowLengths].sort((a, b) => a - b);
  const order = lengths.map((_, k) => k).sort((a, b) => lengths[b]! - lengths[a]! || a - b);
  const rows: Array<{ T: number; used: number; items: number[] }> = [];
  for (const k of order) {
    const n = lengths[k]!;
    const row = rows.find((r) => r.used + n <= r.T);
    if (row) {
      row.items.push(k);
      row.used += n;
      continue;
    }
    const T = ladder.find((t) => t >= n);
    if (T === undefined) throw new RangeError(`a sequence needs ${n} positions; the longest row has ${ladder.at(-1)}`);
    rows.push({ T, used: n, items: [k] });
  }
  const grids: PackedGrid[] = [];
  for (const T of ladder) {
    const ofT = rows.filter((r) => r.T === T);
    const R = Math.max(1, Math.floor(layout.gridTokens / T));
    for (let g = 0; g < ofT.length; g += R) {
      const grid: PackedGrid = {
        R,
        T,
        ids: new Int32Array(R * T),
        targets: new Int32Array(R * T),
        pos: new Int32Array(R * T),
        start: new Int32Array(R * T),
        slots: [],
      };
      for (let i = 0; i < R * T; i++) grid.start[i] = i % T;
      ofT.slice(g, g + R).forEach((r, row) => {
        let offset = 0;
        for (const k of r.items) {
          const ids = seqs[k]!;
          const n = lengths[k]!;
          for (let t = 0; t < n; t++) {
            const at = row * T + offset + t;
            grid.ids[at] = ids[t]!;
            grid.targets[at] = ids[t + 1] ?? 0;
            grid.pos[at] = t;
            grid.start[at] = offset;
          }
          grid.slots.push({ index: k, row, offset, length: n });
          offset += n;
        }
      });
      grids.push(grid);
    }
  }
  return grids;
}

/** The grid's index arrays on the device: ids, targets, pos, start (int32, [R, T]). */
export function gridArrays(g: PackedGrid): [Arr, Arr, Arr, Arr] {
  const a = (x: Int32Array) => np.array(x, { dtype: np.int32 }).reshape([g.R, g.T]);
  return [a(g.ids), a(g.targets), a(g.pos), a(g.start)];
}

/** Query positions per attention chunk: chunk i attends only to keys before its end, which skips most of the causal mask's zeros. */
const CHUNK = 128;

/**
 * e^x for x ≤ 0 from adds and multiplies only (jax-js runs those as SIMD; its `exp` is a scalar call,
 * ~4× slower): e^x = p(x/64)^64 with p the degree-10 Taylor polynomial, x clamped at −80 (e^−80 ≈ 2e−35).
 * Relative error ≤ 1e−5. The gradient is the value itself (stop-gradient trick: x − sg(x) is exactly 0),
 * so autodiff does not differentiate through the polynomial.
 */
function expNonPositive(x: Arr): Arr {
  const y = np.maximum(stopGradient(x.ref), -80).mul(1 / 64);
  let p = y.ref.mul(1 / 3628800).add(1 / 362880);
  for (const c of [1 / 40320, 1 / 5040, 1 / 720, 1 / 120, 1 / 24, 1 / 6, 1 / 2, 1, 1]) p = p.mul(y.ref).add(c);
  y.dispose();
  for (let i = 0; i < 6; i++) p = p.ref.mul(p);
  const e = stopGradient(p);
  return e.mul(x.ref.sub(stopGradient(x)).add(1));
}

/** softmax over the last axis with {@link expNonPositive}. */
function softmax(s: Arr): Arr {
  const e = expNonPositive(s.ref.sub(stopGradient(np.max(s, -1, { keepdims: true }))));
  return e.ref.div(e.sum(-1, { keepdims: true }));
}

/**
 * Causal block-diagonal attention on [R, H, T, hd] heads, in query chunks: query chunk [a, b) sees keys
 * [0, b). `start` [R, T] is where each position's sequence begins. Consumes q, k, v and start.
 */
function attention(q: Arr, k: Arr, v: Arr, start: Arr, hd: number): Arr {
  const [R, , T] = q.shape as [number, number, number, number];
  const outs: Arr[] = [];
  for (let a = 0; a < T; a += CHUNK) {
    const b = Math.min(T, a + CHUNK);
    const i = np.arange(a, b, 1, { dtype: np.int32 }).reshape([1, b - a, 1]);
    const j = np.arange(0, b, 1, { dtype: np.int32 }).reshape([1, 1, b]);
    const st = start.ref.slice([], [a, b]).reshape([R, b - a, 1]);
    const allowed = np.logicalAnd(np.lessEqual(j.ref, i), np.greaterEqual(j, st));
    const mask = np
      .where(allowed, 0, -1e9)
      .astype(np.float32)
      .reshape([R, 1, b - a, b]);
    const qc = q.ref.slice([], [], [a, b]);
    const kc = k.ref.slice([], [], [0, b]);
    const vc = v.ref.slice([], [], [0, b]);
    const scores = np
      .matmul(qc, np.matrixTranspose(kc))
      .mul(1 / Math.sqrt(hd))
      .add(mask);
    outs.push(np.matmul(softmax(scores), vc));
  }
  q.dispose();
  k.dispose();
  v.dispose();
  start.dispose();
  return outs.length === 1 ? outs[0]! : np.concatenate(outs, 2);
}

/** Final hidden states RMSNorm(x)·w_out, [R·T, dim], for a packed grid. Consumes p's leaves except the output matrix, and the index arrays. */
function hidden(p: Params, ids: Arr, pos: Arr, start: Arr, k: ForwardConsts, c: LlamaConfig): Arr {
  const [R, T] = ids.shape as [number, number];
  const N = R * T;
  const H = c.heads;
  const hd = c.dim / H;
  const flatPos = pos.reshape([N]);
  const cos = np.take(k.cos.ref, flatPos.ref, 0).reshape([R, T, 1, hd]);
  const sin = np.take(k.sin.ref, flatPos, 0).reshape([R, T, 1, hd]);
  const rope = (x: Arr) => x.ref.mul(cos.ref).add(np.matmul(x, k.rot.ref).mul(sin.ref));
  const heads = (x: Arr) => np.transpose(x.reshape([R, T, H, hd]), [0, 2, 1, 3]);
  let x = np.take(p.embed, ids.reshape([N]), 0);
  for (const l of p.layers) {
    const h = rmsNorm(x.ref, l.attnNorm, c.eps);
    const q = heads(rope(linear(h.ref, l.wq).reshape([R, T, H, hd])));
    const kk = heads(rope(linear(h.ref, l.wk).reshape([R, T, H, hd])));
    const v = heads(linear(h, l.wv));
    const att = attention(q, kk, v, start.ref, hd);
    x = x.add(linear(np.transpose(att, [0, 2, 1, 3]).reshape([N, c.dim]), l.wo));
    const g = rmsNorm(x.ref, l.ffnNorm, c.eps);
    x = x.add(linear(nn.silu(linear(g.ref, l.gate)).mul(linear(g, l.up)), l.down));
  }
  cos.dispose();
  sin.dispose();
  start.dispose();
  return rmsNorm(x, p.outNorm, c.eps);
}

/** Logits [R, T, V] (padding columns dropped) of a packed grid. Consumes p and the index arrays, not k. */
export function logits(p: Params, ids: Arr, pos: Arr, start: Arr, k: ForwardConsts, c: LlamaConfig): Arr {
  const [R, T] = ids.shape as [number, number];
  const z = linear(hidden(p, ids, pos, start, k, c), p.output);
  return z.reshape([R, T, paddedVocab(c.vocab)]).slice([], [], [0, c.vocab]);
}

/**
 * log π_τ(target) [R, T] of a packed grid, π_τ = softmax(logits / τ): the target's logit (a gathered
 * output row · the hidden state) over τ, minus the log-sum-exp of all logits over τ — the distribution
 * llama.cpp samples from at temperature τ (no top-k/top-p/min-p). Consumes p and the index arrays, not k.
 */
export function tokenLogprobs(p: Params, ids: Arr, targets: Arr, pos: Arr, start: Arr, k: ForwardConsts, c: LlamaConfig, temperature = 1): Arr {
  const [R, T] = ids.shape as [number, number];
  const h = hidden(p, ids, pos, start, k, c);
  // τ is fixed when the program is traced: at τ = 1 (the default) no pass over the [N, V] logits is added.
  const tempered = (x: Arr) => (temperature === 1 ? x : x.mul(1 / temperature));
  const picked = tempered(h.ref.mul(np.take(p.output.ref, targets.reshape([R * T]), 0)).sum(-1));
  const z = tempered(linear(h, p.output)).add(k.vocabBias.ref);
  const m = stopGradient(np.max(z.ref, -1, { keepdims: true }));
  const lse = np
    .log(expNonPositive(z.sub(m.ref)).sum(-1, { keepdims: true }))
    .add(m)
    .reshape([R * T]);
  return picked.sub(lse).reshape([R, T]);
}
