/**
 * Which totals M can n prompts spend exactly when each takes m ∈ {0} ∪ [m_min, m_max]? Exactly those
 * with s · m_min ≤ M ≤ s · m_max for some number s ≤ n of selected prompts.
 */

export interface Bounds {
  /** m_min ≥ 2: a selected prompt gets at least this many (V_root(v, 1) = 0). */
  min: number;
  /** m_max ≥ m_min. */
  max: number;
}

/** The range [lo, hi] of selected-prompt counts s that can spend M exactly (lo > hi: none). */
export function selectableCounts(n: number, M: number, { min, max }: Bounds): { lo: number; hi: number } {
  if (M === 0) return { lo: 0, hi: 0 };
  return { lo: Math.max(1, Math.ceil(M / max)), hi: Math.min(n, Math.floor(M / min)) };
}

export function isSpendable(n: number, M: number, bounds: Bounds): boolean {
  const { lo, hi } = selectableCounts(n, M, bounds);
  return lo <= hi;
}

/** Largest total ≤ M that n prompts can spend exactly (0 always can). */
export function spendableBelow(n: number, M: number, { min, max }: Bounds): number {
  let best = 0;
  for (let s = 1; s <= n && s * min <= M; s++) best = Math.max(best, Math.min(M, s * max));
  return best;
}

/** Smallest total ≥ M that n prompts can spend exactly, or null when M > n · m_max. */
export function spendableAbove(n: number, M: number, { min, max }: Bounds): number | null {
  if (M === 0) return 0;
  const s = Math.max(1, Math.ceil(M / max));
  return s <= n ? Math.max(M, s * min) : null;
}
