/**
 * The pieces of PPO's clipped surrogate every trainable policy shares, so the embedded, tabular and
 * token-level updates agree term for term:
 *   L = (1/D) Σ_turns min(ρ·A, clip(ρ, 1 − ε, 1 + ε)·A),  ρ = π(a)/π_old(a),
 * with the divisor D chosen by `normalise`.
 */

/**
 * What the surrogate's sum is divided by. The choice decides whether a step grows with the contrast it
 * found, which is exactly what an allocator buys, so it is a regime variable of every comparison:
 *  - turns: the turns (tokens, for a language model) with a nonzero advantage — a step is the same
 *    size however few groups were mixed;
 *  - samples: the number of samples, one per rewarded leaf — REINFORCE's (1/B) Σ A ∇log π, so every
 *    mixed group adds to the step;
 *  - batch: every sampled turn (token) of the step, zero-advantage ones included — verl's token-mean.
 */
export const NORMALISATIONS = ['turns', 'samples', 'batch'] as const;
export type Normalise = (typeof NORMALISATIONS)[number];

/** One turn's clipped term: its objective, the coefficient ρ·A of ∇log π (0 when clipped) and whether it was clipped. */
export function clippedTerm(ratio: number, A: number, eps: number): { objective: number; coef: number; clipped: boolean } {
  const clipped = (A > 0 && ratio > 1 + eps) || (A < 0 && ratio < 1 - eps);
  return { objective: Math.min(ratio * A, Math.min(Math.max(ratio, 1 - eps), 1 + eps) * A), coef: clipped ? 0 : ratio * A, clipped };
}

/** D for a turn-level policy: `contributing` turns had a gradient; samples and their turns come from the step. */
export function surrogateDivisor(normalise: Normalise, contributing: number, samples: readonly { turns: readonly unknown[] }[]): number {
  if (normalise === 'turns') return contributing;
  if (normalise === 'samples') return samples.length;
  return samples.reduce((n, s) => n + s.turns.length, 0);
}
