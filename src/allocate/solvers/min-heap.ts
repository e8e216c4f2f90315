/**
 * A plain binary min-heap of (key, item) pairs in parallel typed arrays, for the hot loop of the
 * root solver's sweep: only push, read top, change the top's key upward, and pop are needed.
 * Ties are left in any order (the sweep's values do not depend on them).
 */
export class MinHeap {
  private readonly keys: Float64Array;
  private readonly items: Int32Array;
  size = 0;

  constructor(capacity: number) {
    this.keys = new Float64Array(capacity);
    this.items = new Int32Array(capacity);
  }

  topItem(): number {
    return this.items[0];
  }

  topKey(): number {
    return this.keys[0];
  }

  push(item: number, key: number): void {
    const keys = this.keys;
    const items = this.items;
    let p = this.size++;
    while (p > 0) {
      const q = (p - 1) >> 1;
      if (keys[q] <= key) break;
      keys[p] = keys[q];
      items[p] = items[q];
      p = q;
    }
    keys[p] = key;
    items[p] = item;
  }

  /** Gives the top item a key ≥ its old one and restores heap order. */
  raiseTop(key: number): void {
    this.siftDown(this.items[0], key);
  }

  pop(): void {
    const last = --this.size;
    if (last > 0) this.siftDown(this.items[last], this.keys[last]);
  }

  private siftDown(item: number, key: number): void {
    const keys = this.keys;
    const items = this.items;
    const n = this.size;
    let p = 0;
    for (;;) {
      let c = 2 * p + 1;
      if (c >= n) break;
      if (c + 1 < n && keys[c + 1] < keys[c]) c++;
      if (keys[c] >= key) break;
      keys[p] = keys[c];
      items[p] = items[c];
      p = c;
    }
    keys[p] = key;
    items[p] = item;
  }
}
