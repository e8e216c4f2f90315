/**
 * Compressed sparse rows (CSR) of feature vectors: what extractors produce and what the replay window
 * stores. Hashed features are sparse (a few hundred non-zeros out of thousands), so rows stay small;
 * the network gets dense minibatches from {@link densify}.
 */

export interface FeatureMatrix {
  rows: number;
  dim: number;
  /** Row r's entries are idx/val[indptr[r] .. indptr[r + 1]), with idx strictly increasing. */
  indptr: Int32Array;
  idx: Int32Array;
  val: Float32Array;
}

/** Appends rows one at a time; each row's entries are given as a dense scratch + touched list. */
export class FeatureMatrixBuilder {
  private indptr: number[] = [0];
  private idx: number[] = [];
  private val: number[] = [];

  constructor(readonly dim: number) {}

  /** Adds one row from parallel index/value lists (indices need not be sorted or unique: duplicates add). */
  addRow(indices: readonly number[], values: readonly number[]): void {
    const order = indices.map((_, k) => k).sort((a, b) => indices[a] - indices[b]);
    let last = -1;
    for (const k of order) {
      const i = indices[k];
      if (i < 0 || i >= this.dim) throw new RangeError(`feature index ${i} outside [0, ${this.dim})`);
      if (i === last) this.val[this.val.length - 1] += values[k];
      else {
        this.idx.push(i);
        this.val.push(values[k]);
        last = i;
      }
    }
    this.indptr.push(this.idx.length);
  }

  /** Adds one row whose indices are already strictly increasing (the fast path for extractors). */
  addSortedRow(indices: ArrayLike<number>, values: ArrayLike<number>): void {
    let last = -1;
    for (let k = 0; k < indices.length; k++) {
      const i = indices[k];
      if (i <= last || i >= this.dim) throw new RangeError(`feature index ${i} after ${last} is not increasing within [0, ${this.dim})`);
      this.idx.push(i);
      this.val.push(values[k]);
      last = i;
    }
    this.indptr.push(this.idx.length);
  }

  build(): FeatureMatrix {
    return {
      rows: this.indptr.length - 1,
      dim: this.dim,
      indptr: Int32Array.from(this.indptr),
      idx: Int32Array.from(this.idx),
      val: Float32Array.from(this.val),
    };
  }
}

/**
 * Dense [rows.length, stride] row-major copy of the selected rows (a row index out of range gives a
 * zero row, for padding; columns past dim are zero — jax-js matmuls are much faster on aligned widths).
 */
export function densify(m: FeatureMatrix, rows: readonly number[], out?: Float32Array, stride = m.dim): Float32Array {
  if (stride < m.dim) throw new RangeError(`stride ${stride} is smaller than dim ${m.dim}`);
  const x = out ?? new Float32Array(rows.length * stride);
  x.fill(0);
  for (let r = 0; r < rows.length; r++) {
    const src = rows[r];
    if (src < 0 || src >= m.rows) continue;
    const base = r * stride;
    for (let k = m.indptr[src]; k < m.indptr[src + 1]; k++) x[base + m.idx[k]] = m.val[k];
  }
  return x;
}

/** Row-wise concatenation of matrices with the same dim (the replay window). */
export function concatRows(parts: readonly FeatureMatrix[], dim: number): FeatureMatrix {
  const rows = parts.reduce((s, p) => s + p.rows, 0);
  const nnz = parts.reduce((s, p) => s + p.idx.length, 0);
  const indptr = new Int32Array(rows + 1);
  const idx = new Int32Array(nnz);
  const val = new Float32Array(nnz);
  let r = 0;
  let k = 0;
  for (const p of parts) {
    if (p.dim !== dim) throw new RangeError(`feature matrix of dim ${p.dim} where ${dim} was expected`);
    idx.set(p.idx, k);
    val.set(p.val, k);
    for (let i = 0; i < p.rows; i++) indptr[r + i + 1] = k + p.indptr[i + 1];
    r += p.rows;
    k += p.idx.length;
  }
  return { rows, dim, indptr, idx, val };
}

/** Column-wise concatenation: row r of the result is [a_r, b_r] (b's indices shifted by a.dim). */
export function concatColumns(a: FeatureMatrix, b: FeatureMatrix): FeatureMatrix {
  if (a.rows !== b.rows) throw new RangeError(`cannot join ${a.rows} rows with ${b.rows} rows`);
  const nnz = a.idx.length + b.idx.length;
  const indptr = new Int32Array(a.rows + 1);
  const idx = new Int32Array(nnz);
  const val = new Float32Array(nnz);
  let k = 0;
  for (let r = 0; r < a.rows; r++) {
    for (let i = a.indptr[r]; i < a.indptr[r + 1]; i++, k++) {
      idx[k] = a.idx[i];
      val[k] = a.val[i];
    }
    for (let i = b.indptr[r]; i < b.indptr[r + 1]; i++, k++) {
      idx[k] = b.idx[i] + a.dim;
      val[k] = b.val[i];
    }
    indptr[r + 1] = k;
  }
  return { rows: a.rows, dim: a.dim + b.dim, indptr, idx, val };
}
