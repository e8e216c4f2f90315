/**
 * The prefix problem's types and value functions (TRACE-SPEC §3 step 4), shared by the greedy prefix
 * solver and its priced form so neither solver has to import the other for them. For prefix (j, t)
 * with observed reward r and q = Ṽ(H(i, j, t)):
 *   ρ = r·q + (1 − r)(1 − q)     chance a new continuation repeats the observed outcome
 *   V_pref(K) = 1 − ρ^K          chance at least one of K continuations flips it
 */
export interface PrefixInput {
  id: string;
  q: number;
  r: number;
  /** Weight w ≥ 0 of this prefix's value w·V_pref(K) (default 1; trace's entropy-weighted prefixes). */
  w?: number;
  /** Cost c ≥ 1 (an integer) of one continuation from here, in the budget's unit (default 1). */
  cost?: number;
}

export interface PrefixAllocation {
  /** K per prefix, in input order (0 = not expanded). */
  k: number[];
  objective: number;
}

/** ρ = r·q + (1 − r)(1 − q). */
export function repeatChance(q: number, r: number): number {
  return r * q + (1 - r) * (1 - q);
}

/** V_pref(K) = 1 − ρ^K. */
export function flipChance(rho: number, K: number): number {
  return 1 - rho ** K;
}

/** Marginal gain of the K-th continuation, ρ^(K−1)(1 − ρ) (K ≥ 1). */
export function flipGain(rho: number, K: number): number {
  return rho ** (K - 1) * (1 - rho);
}
