/**
 * A linear scorer over hashed sparse features, logit(c) = Σ_{i ∈ φ(c)} w_i, with an Adam optimiser
 * (Kingma & Ba) written out because it is a few lines: m ← β₁m + (1−β₁)g, v ← β₂v + (1−β₂)g²,
 * w ← w + lr · m̂ / (√v̂ + ε) (ascent: the gradient is of an objective to maximise).
 */
export class LinearScorer {
  readonly w: Float64Array;
  private m: Float64Array;
  private v: Float64Array;
  private t = 0;

  constructor(readonly dim: number) {
    this.w = new Float64Array(dim);
    this.m = new Float64Array(dim);
    this.v = new Float64Array(dim);
  }

  logit(features: Int32Array): number {
    let s = 0;
    for (let i = 0; i < features.length; i++) s += this.w[features[i]!]!;
    return s;
  }

  /** One Adam ascent step on a dense gradient. */
  adamStep(g: Float64Array, lr: number, beta1 = 0.9, beta2 = 0.999, eps = 1e-8): void {
    this.t += 1;
    const c1 = 1 - beta1 ** this.t;
    const c2 = 1 - beta2 ** this.t;
    for (let i = 0; i < this.dim; i++) {
      const gi = g[i]!;
      if (gi === 0 && this.m[i] === 0) continue;
      this.m[i] = beta1 * this.m[i]! + (1 - beta1) * gi;
      this.v[i] = beta2 * this.v[i]! + (1 - beta2) * gi * gi;
      this.w[i]! += (lr * (this.m[i]! / c1)) / (Math.sqrt(this.v[i]! / c2) + eps);
    }
  }

  /** Forgets the optimiser's moments and step count, keeping the weights (a new phase of training starts afresh). */
  resetOptimiser(): void {
    this.t = 0;
    this.m.fill(0);
    this.v.fill(0);
  }

  /** Weights and optimiser state as one buffer: [t, w…, m…, v…] (float64, little-endian). */
  toBytes(): Uint8Array {
    const out = new Float64Array(1 + 3 * this.dim);
    out[0] = this.t;
    out.set(this.w, 1);
    out.set(this.m, 1 + this.dim);
    out.set(this.v, 1 + 2 * this.dim);
    return new Uint8Array(out.buffer);
  }

  fromBytes(bytes: Uint8Array): void {
    if (bytes.byteLength !== 8 * (1 + 3 * this.dim))
      throw new RangeError(`scorer snapshot has ${bytes.byteLength} bytes, expected ${8 * (1 + 3 * this.dim)} for dim ${this.dim}`);
    const a = new Float64Array(bytes.slice().buffer);
    this.t = a[0]!;
    this.w.set(a.subarray(1, 1 + this.dim));
    this.m.set(a.subarray(1 + this.dim, 1 + 2 * this.dim));
    this.v.set(a.subarray(1 + 2 * this.dim));
  }
}
