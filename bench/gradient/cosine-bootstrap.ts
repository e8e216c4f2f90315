import { createRng } from '../../src/util/rng.ts';
import { dot, EMPTY, type SparseVec } from './sparse.ts';

/** Gram matrix G[p][q] = ⟨a_p, b_q⟩ (row-major, a.length × b.length). */
export function gram(a: readonly SparseVec[], b: readonly SparseVec[], symmetric = false): Float64Array {
  const g = new Float64Array(a.length * b.length);
  for (let p = 0; p < a.length; p++) {
    for (let q = symmetric ? p : 0; q < b.length; q++) {
      const x = dot(a[p]!, b[q]!);
      g[p * b.length + q] = x;
      if (symmetric) g[q * b.length + p] = x;
    }
  }
  return g;
}

/** uᵀ G v for a row-major G of u.length × v.length. */
function form(g: Float64Array, u: Float64Array, v: Float64Array): number {
  let s = 0;
  for (let p = 0; p < u.length; p++) {
    if (u[p] === 0) continue;
    let row = 0;
    for (let q = 0; q < v.length; q++) row += g[p * v.length + q]! * v[q]!;
    s += u[p]! * row;
  }
  return s;
}

/** Multinomial resampling weights: how often each of n prompts is drawn in each of `resamples` draws; draw 0 is all ones (the point estimate). */
export function resampleWeights(n: number, resamples: number, seed: number): Float64Array[] {
  const rng = createRng(seed).fork('bootstrap');
  const out = [new Float64Array(n).fill(1)];
  for (let b = 0; b < resamples; b++) {
    const w = new Float64Array(n);
    for (let i = 0; i < n; i++) w[rng.int(n)]! += 1;
    out.push(w);
  }
  return out;
}

/**
 * Cosine between an arm's summed direction Σ_p w_p a_p and a reference Σ_q v_q r_q under prompt
 * resampling, without re-summing sparse vectors per draw: with Gram matrices the cosine of a draw is
 * wᵀ G_ar v / √(wᵀ G_aa w · vᵀ G_rr v). For the reference on the same prompts, v = w (a prompt drawn
 * twice counts twice on both sides); for the disjoint prompts, v is drawn independently.
 */
export class ResampledReference {
  private readonly rr: Float64Array;

  constructor(
    readonly reference: readonly SparseVec[],
    /** Draws over the reference's prompts (index 0 = every prompt once). */
    readonly weights: readonly Float64Array[],
  ) {
    this.rr = gram(reference, reference, true);
  }

  /**
   * One cosine per draw. `arm` is aligned with `armWeights`' prompts (EMPTY where the arm has no
   * tree); `sameDraws`: the arm's prompts are the reference's, so its draw is the reference's.
   */
  cosines(arm: readonly SparseVec[], aa: Float64Array, armWeights: readonly Float64Array[]): Float64Array {
    const ar = gram(arm, this.reference);
    const out = new Float64Array(this.weights.length);
    for (let b = 0; b < this.weights.length; b++) {
      const w = armWeights[b]!;
      const v = this.weights[b]!;
      const d = Math.sqrt(form(aa, w, w) * form(this.rr, v, v));
      out[b] = d > 0 ? form(ar, w, v) / d : Number.NaN;
    }
    return out;
  }
}

/** Aligns per-prompt vectors with a fixed prompt order (EMPTY for prompts without one). */
export function aligned(ids: readonly string[], vectors: ReadonlyArray<{ promptId: string; v: SparseVec }>): SparseVec[] {
  const m = new Map(vectors.map((x) => [x.promptId, x.v]));
  return ids.map((id) => m.get(id) ?? EMPTY);
}

/** Point estimate (draw 0) and the 95 % percentile interval over the other draws. */
export function interval(draws: Float64Array): { point: number; lo: number; hi: number } {
  const rest = Array.from(draws.subarray(1))
    .filter(Number.isFinite)
    .sort((a, b) => a - b);
  const n = rest.length;
  return { point: draws[0]!, lo: n ? rest[Math.floor(0.025 * n)]! : Number.NaN, hi: n ? rest[Math.min(n - 1, Math.ceil(0.975 * n) - 1)]! : Number.NaN };
}
