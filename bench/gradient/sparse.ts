/**
 * Sparse vectors over the embedded policy's hashed weights. A gradient touches only the features of
 * the candidates a turn saw (a few hundred of 2^16 weights), so per-prompt gradients are kept sparse
 * and compared by merged dot products.
 */

/** Indices ascending, no repeats. */
export interface SparseVec {
  idx: Int32Array;
  val: Float64Array;
}

export const EMPTY: SparseVec = { idx: new Int32Array(0), val: new Float64Array(0) };

/** Sums scaled sparse vectors (and single coordinates) into one. */
export class SparseSum {
  private readonly m = new Map<number, number>();

  add(v: SparseVec, scale = 1): void {
    if (scale === 0) return;
    for (let j = 0; j < v.idx.length; j++) this.m.set(v.idx[j]!, (this.m.get(v.idx[j]!) ?? 0) + scale * v.val[j]!);
  }

  addAt(i: number, x: number): void {
    this.m.set(i, (this.m.get(i) ?? 0) + x);
  }

  finish(): SparseVec {
    const idx = Int32Array.from([...this.m.keys()].sort((a, b) => a - b));
    const val = Float64Array.from(idx, (i) => this.m.get(i)!);
    return { idx, val };
  }
}

export function dot(a: SparseVec, b: SparseVec): number {
  let s = 0;
  for (let i = 0, j = 0; i < a.idx.length && j < b.idx.length;) {
    const x = a.idx[i]!;
    const y = b.idx[j]!;
    if (x === y) s += a.val[i++]! * b.val[j++]!;
    else if (x < y) i++;
    else j++;
  }
  return s;
}

export function sum(vs: readonly SparseVec[]): SparseVec {
  const s = new SparseSum();
  for (const v of vs) s.add(v);
  return s.finish();
}

export function cosine(a: SparseVec, b: SparseVec): number {
  const d = Math.sqrt(dot(a, a) * dot(b, b));
  return d > 0 ? dot(a, b) / d : Number.NaN;
}

/** The dense form (tests compare with the policy's own dense gradient). */
export function toDense(v: SparseVec, dim: number): Float64Array {
  const out = new Float64Array(dim);
  for (let j = 0; j < v.idx.length; j++) out[v.idx[j]!] = v.val[j]!;
  return out;
}
