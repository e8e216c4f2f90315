/**
 * A binary heap of item indices 0..capacity−1 with a key per item, supporting update and removal by
 * item (typed arrays, no allocation per operation). `max` orders larger keys first; ties always go to
 * the lower index in a max-heap and to the higher index in a min-heap, so "lower index first" holds
 * for taking and "higher index first" for giving back.
 */
export class IndexedHeap {
  private readonly heap: Int32Array;
  private readonly pos: Int32Array;
  private readonly key: Float64Array;
  size = 0;

  constructor(
    capacity: number,
    private readonly max: boolean,
  ) {
    this.heap = new Int32Array(capacity);
    this.pos = new Int32Array(capacity).fill(-1);
    this.key = new Float64Array(capacity);
  }

  has(i: number): boolean {
    return this.pos[i] >= 0;
  }

  top(): number {
    return this.heap[0];
  }

  topKey(): number {
    return this.key[this.heap[0]];
  }

  /** Inserts item i or changes its key. */
  set(i: number, k: number): void {
    if (this.pos[i] < 0) {
      this.key[i] = k;
      this.heap[this.size] = i;
      this.pos[i] = this.size++;
      this.up(this.size - 1);
      return;
    }
    this.key[i] = k;
    this.up(this.pos[i]);
    this.down(this.pos[i]);
  }

  remove(i: number): void {
    const p = this.pos[i];
    if (p < 0) return;
    const last = this.heap[--this.size];
    this.pos[i] = -1;
    if (p === this.size) return;
    this.heap[p] = last;
    this.pos[last] = p;
    this.up(p);
    this.down(this.pos[last]);
  }

  pop(): number {
    const i = this.heap[0];
    this.remove(i);
    return i;
  }

  /** Heap order: a goes above b. */
  private above(a: number, b: number): boolean {
    const ka = this.key[a];
    const kb = this.key[b];
    if (ka !== kb) return this.max ? ka > kb : ka < kb;
    return this.max ? a < b : a > b;
  }

  private up(p: number): void {
    const h = this.heap;
    const i = h[p];
    while (p > 0) {
      const q = (p - 1) >> 1;
      if (!this.above(i, h[q])) break;
      h[p] = h[q];
      this.pos[h[p]] = p;
      p = q;
    }
    h[p] = i;
    this.pos[i] = p;
  }

  private down(p: number): void {
    const h = this.heap;
    const i = h[p];
    for (;;) {
      let c = 2 * p + 1;
      if (c >= this.size) break;
      if (c + 1 < this.size && this.above(h[c + 1], h[c])) c++;
      if (!this.above(h[c], i)) break;
      h[p] = h[c];
      this.pos[h[p]] = p;
      p = c;
    }
    h[p] = i;
    this.pos[i] = p;
  }
}
