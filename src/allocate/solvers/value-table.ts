import { mixedChance, mixedGain } from './mixed-value.ts';

/** A weighted root problem as numbers: g_i(m) = w_i V_root(v_i, m) split into a base and marginal gains. */
export interface WeightedItem {
  v: number;
  w: number;
  /**
   * b ≥ 0: a value linear in m added to the mixed chance, g(m) = w·V_root(v, m) + b·m (m ≥ 1). Used by
   * trace's expansion-aware root value (each bare rollout brings N continuations worth b); linear
   * keeps g concave on [m_min, m_max], so the exact methods apply unchanged. Default 0.
   */
  perUnit?: number;
}

/** Per prompt: base g(m_min) and the L = m_max − m_min marginal gains after it (non-increasing). */
export interface Table {
  n: number;
  min: number;
  L: number;
  base: Float64Array;
  /** tails[i·L + k] = g_i(m_min + k + 1) − g_i(m_min + k). */
  tails: Float64Array;
  /** cum[i·L + k] = tails[i·L] + … + tails[i·L + k] = g_i(m_min + k + 1) − g_i(m_min). */
  cum: Float64Array;
  scale: number;
}

export function buildTable(items: readonly WeightedItem[], min: number, max: number): Table {
  const n = items.length;
  const L = max - min;
  const base = new Float64Array(n);
  const tails = new Float64Array(n * L);
  const cum = new Float64Array(n * L);
  let scale = 0;
  for (let i = 0; i < n; i++) {
    const { v, w } = items[i];
    const b = items[i].perUnit ?? 0;
    scale = Math.max(scale, w + b);
    base[i] = w * mixedChance(v, min) + b * min;
    const u = v <= 0.5 ? v : 1 - v;
    // Marginal gain of unit m: u^(m−1)(1 − u) + (1 − u)^(m−1) u, powers updated by multiplication.
    let pu = u ** min;
    let pq = (1 - u) ** min;
    let prev = w * mixedGain(v, min);
    for (let k = 0; k < L; k++) {
      const g = Math.min(prev, w * (pu * (1 - u) + pq * u));
      tails[i * L + k] = g + b;
      cum[i * L + k] = (k > 0 ? cum[i * L + k - 1] : 0) + g + b;
      prev = g;
      pu *= u;
      pq *= 1 - u;
    }
  }
  return { n, min, L, base, tails, cum, scale: Math.max(scale, 1e-300) };
}

/** Values equal within this (relative) count as ties. */
export const TIE = 1e-9;
