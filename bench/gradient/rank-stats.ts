/** Rank statistics of bench/gradient/root-value.ts: which root value orders prompts as their signal does. */

/** Average ranks (ties share the mean rank). */
export function ranks(xs: readonly number[]): number[] {
  const order = xs.map((x, i) => [x, i] as const).sort((a, b) => a[0] - b[0]);
  const out = new Array<number>(xs.length);
  for (let i = 0; i < order.length;) {
    let j = i;
    while (j + 1 < order.length && order[j + 1]![0] === order[i]![0]) j++;
    for (let k = i; k <= j; k++) out[order[k]![1]] = (i + j) / 2;
    i = j + 1;
  }
  return out;
}

/** Pearson correlation; NaN when either side is constant. */
export function pearson(a: readonly number[], b: readonly number[]): number {
  const n = a.length;
  const ma = a.reduce((s, x) => s + x, 0) / n;
  const mb = b.reduce((s, x) => s + x, 0) / n;
  let sab = 0,
    saa = 0,
    sbb = 0;
  for (let i = 0; i < n; i++) {
    sab += (a[i]! - ma) * (b[i]! - mb);
    saa += (a[i]! - ma) ** 2;
    sbb += (b[i]! - mb) ** 2;
  }
  return saa > 0 && sbb > 0 ? sab / Math.sqrt(saa * sbb) : Number.NaN;
}

/** Spearman's rank correlation: Pearson on average ranks. */
export const spearman = (a: readonly number[], b: readonly number[]) => pearson(ranks(a), ranks(b));

/** Share of Σ t_i held by the half of the prompts the value ranks highest (ties broken by position). */
export function topHalfShare(value: readonly number[], t: readonly number[]): number {
  const order = value.map((v, i) => [v, i] as const).sort((a, b) => b[0] - a[0] || a[1] - b[1]);
  const total = t.reduce((s, x) => s + x, 0);
  return order.slice(0, Math.floor(order.length / 2)).reduce((s, [, i]) => s + t[i]!, 0) / total;
}
