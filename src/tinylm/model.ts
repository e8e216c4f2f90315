/**
 * A llama-architecture model as plain Float32Arrays, and its GGUF form. Matrices are stored
 * (out, in) row-major so y = x·Wᵀ, which is GGUF's dims [in, out] (innermost first). RoPE acts on
 * adjacent pairs of each head (llama.cpp's normal mode for `llama`), so no q/k permutation is needed.
 */
import type { Rng } from '../util/rng.ts';
import { GgufError, meta, type GgufFile, type GgufTensor, type GgufValue } from './gguf-format.ts';
import { readGguf } from './gguf-read.ts';
import { writeGguf } from './gguf-write.ts';
import { BOS_ID, EOS_ID, UNK_ID, type Vocabulary } from './vocabulary.ts';

export interface LlamaConfig {
  vocab: number;
  /** n_embd. */
  dim: number;
  layers: number;
  heads: number;
  /** Feed-forward width (n_ff). */
  ffn: number;
  /** Context length written to the GGUF. */
  context: number;
  ropeBase: number;
  /** RMSNorm ε. */
  eps: number;
}

export interface LayerWeights {
  attnNorm: Float32Array;
  wq: Float32Array;
  wk: Float32Array;
  wv: Float32Array;
  wo: Float32Array;
  ffnNorm: Float32Array;
  gate: Float32Array;
  up: Float32Array;
  down: Float32Array;
}

export interface LlamaWeights {
  /** [vocab, dim]. */
  embed: Float32Array;
  layers: LayerWeights[];
  outNorm: Float32Array;
  /** [vocab, dim]. */
  output: Float32Array;
}

export interface LlamaModel {
  config: LlamaConfig;
  weights: LlamaWeights;
  vocab: Vocabulary;
}

/** Normal(0, σ²) entries by Box–Muller from the seeded stream. */
function gaussian(n: number, sigma: number, rng: Rng): Float32Array {
  const out = new Float32Array(n);
  for (let i = 0; i < n; i += 2) {
    const r = Math.sqrt(-2 * Math.log(1 - rng.next())) * sigma;
    const t = 2 * Math.PI * rng.next();
    out[i] = r * Math.cos(t);
    if (i + 1 < n) out[i + 1] = r * Math.sin(t);
  }
  return out;
}

/** GPT-2-style init: N(0, 0.02²), residual output projections scaled by 1/√(2·layers); norms at 1. */
export function initWeights(c: LlamaConfig, rng: Rng, sigma = 0.02): LlamaWeights {
  const ones = (n: number) => new Float32Array(n).fill(1);
  const res = sigma / Math.sqrt(2 * c.layers);
  return {
    embed: gaussian(c.vocab * c.dim, sigma, rng),
    layers: Array.from({ length: c.layers }, () => ({
      attnNorm: ones(c.dim),
      wq: gaussian(c.dim * c.dim, sigma, rng),
      wk: gaussian(c.dim * c.dim, sigma, rng),
      wv: gaussian(c.dim * c.dim, sigma, rng),
      wo: gaussian(c.dim * c.dim, res, rng),
      ffnNorm: ones(c.dim),
      gate: gaussian(c.ffn * c.dim, sigma, rng),
      up: gaussian(c.ffn * c.dim, sigma, rng),
      down: gaussian(c.dim * c.ffn, res, rng),
    })),
    outNorm: ones(c.dim),
    output: gaussian(c.vocab * c.dim, sigma, rng),
  };
}

const LAYER_TENSORS: Array<[keyof LayerWeights, string, (c: LlamaConfig) => number[]]> = [
  ['attnNorm', 'attn_norm', (c) => [c.dim]],
  ['wq', 'attn_q', (c) => [c.dim, c.dim]],
  ['wk', 'attn_k', (c) => [c.dim, c.dim]],
  ['wv', 'attn_v', (c) => [c.dim, c.dim]],
  ['wo', 'attn_output', (c) => [c.dim, c.dim]],
  ['ffnNorm', 'ffn_norm', (c) => [c.dim]],
  ['gate', 'ffn_gate', (c) => [c.dim, c.ffn]],
  ['up', 'ffn_up', (c) => [c.dim, c.ffn]],
  ['down', 'ffn_down', (c) => [c.ffn, c.dim]],
];

/** The model as GGUF bytes llama.cpp loads (architecture `llama`, F32, SPM vocabulary, no space prefix). */
export function modelToGguf(m: LlamaModel, name = 'trace-rl tiny-lm'): Uint8Array {
  const c = m.config;
  if (m.vocab.pieces.length !== c.vocab) throw new GgufError(`vocabulary has ${m.vocab.pieces.length} pieces but config.vocab is ${c.vocab}`);
  const md: Record<string, GgufValue> = {
    'general.architecture': meta.str('llama'),
    'general.name': meta.str(name),
    'general.alignment': meta.u32(32),
    'llama.context_length': meta.u32(c.context),
    'llama.embedding_length': meta.u32(c.dim),
    'llama.block_count': meta.u32(c.layers),
    'llama.feed_forward_length': meta.u32(c.ffn),
    'llama.attention.head_count': meta.u32(c.heads),
    'llama.attention.head_count_kv': meta.u32(c.heads),
    'llama.attention.layer_norm_rms_epsilon': meta.f32(c.eps),
    'llama.rope.dimension_count': meta.u32(c.dim / c.heads),
    'llama.rope.freq_base': meta.f32(c.ropeBase),
    'llama.vocab_size': meta.u32(c.vocab),
    'tokenizer.ggml.model': meta.str('llama'),
    'tokenizer.ggml.tokens': meta.strings(m.vocab.pieces),
    'tokenizer.ggml.scores': meta.f32s(m.vocab.scores),
    'tokenizer.ggml.token_type': meta.i32s(m.vocab.types),
    'tokenizer.ggml.unknown_token_id': meta.u32(UNK_ID),
    'tokenizer.ggml.bos_token_id': meta.u32(BOS_ID),
    'tokenizer.ggml.eos_token_id': meta.u32(EOS_ID),
    'tokenizer.ggml.add_bos_token': meta.bool(true),
    'tokenizer.ggml.add_eos_token': meta.bool(false),
    'tokenizer.ggml.add_space_prefix': meta.bool(false),
  };
  const w = m.weights;
  const tensors: GgufTensor[] = [
    { name: 'token_embd.weight', dims: [c.dim, c.vocab], data: w.embed },
    { name: 'output_norm.weight', dims: [c.dim], data: w.outNorm },
    { name: 'output.weight', dims: [c.dim, c.vocab], data: w.output },
  ];
  w.layers.forEach((l, i) => {
    for (const [key, gname, dims] of LAYER_TENSORS) tensors.push({ name: `blk.${i}.${gname}.weight`, dims: dims(c), data: l[key] });
  });
  return writeGguf(md, tensors);
}

function num(f: GgufFile, key: string, file: string): number {
  const v = f.metadata.get(key);
  if (!v || typeof v.value !== 'number') throw new GgufError(`${file}: metadata ${key} is missing or not a number`);
  return v.value;
}

/** Reads a model written by {@link modelToGguf} (or any F32 llama GGUF with an SPM vocabulary and separate output.weight). */
export function modelFromGguf(bytes: Uint8Array, file = 'gguf'): LlamaModel {
  const f = readGguf(bytes, file);
  const arch = f.metadata.get('general.architecture');
  if (arch?.value !== 'llama') throw new GgufError(`${file}: general.architecture is ${String(arch?.value)}, expected llama`);
  const list = (key: string) => {
    const v = f.metadata.get(key);
    if (v?.type !== 'array') throw new GgufError(`${file}: metadata ${key} is missing or not an array`);
    return v.value;
  };
  const vocab: Vocabulary = {
    pieces: list('tokenizer.ggml.tokens') as string[],
    scores: list('tokenizer.ggml.scores') as number[],
    types: list('tokenizer.ggml.token_type') as number[],
  };
  const heads = num(f, 'llama.attention.head_count', file);
  if (num(f, 'llama.attention.head_count_kv', file) !== heads)
    throw new GgufError(`${file}: grouped-query attention (head_count_kv ≠ head_count) is not supported by the trainer`);
  const config: LlamaConfig = {
    vocab: vocab.pieces.length,
    dim: num(f, 'llama.embedding_length', file),
    layers: num(f, 'llama.block_count', file),
    heads,
    ffn: num(f, 'llama.feed_forward_length', file),
    context: num(f, 'llama.context_length', file),
    ropeBase: num(f, 'llama.rope.freq_base', file),
    eps: num(f, 'llama.attention.layer_norm_rms_epsilon', file),
  };
  const byName = new Map(f.tensors.map((t) => [t.name, t.data]));
  const get = (name: string) => {
    const d = byName.get(name);
    if (!d) throw new GgufError(`${file}: tensor ${name} is missing`);
    return d;
  };
  const embed = get('token_embd.weight');
  const weights: LlamaWeights = {
    embed,
    outNorm: get('output_norm.weight'),
    // A missing output.weight means tied embeddings (llama.cpp's convention).
    output: byName.get('output.weight') ?? embed.slice(),
    layers: Array.from({ length: config.layers }, (_, i) => {
      const l = {} as LayerWeights;
      for (const [key, gname] of LAYER_TENSORS) l[key] = get(`blk.${i}.${gname}.weight`);
      return l;
    }),
  };
  return { config, weights, vocab };
}
