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

/** A turn the surrogate sums over: a nonzero advantage on a turn that did not fail. */
export interface ContributingTurn<S> {
  sample: S;
  index: number;
  advantage: number;
}

/** The turns with a gradient, in order; a sample whose advantages do not match its turns is refused. */
export function* contributingTurns<S extends { prompt: { id: string }; turns: readonly { error?: unknown }[]; advantages: readonly number[] }>(
  samples: readonly S[],
): Generator<ContributingTurn<S>> {
  for (const sample of samples) {
    if (sample.advantages.length !== sample.turns.length)
      throw new RangeError(`sample ${sample.prompt.id}: ${sample.advantages.length} advantages for ${sample.turns.length} turns`);
    for (let index = 0; index < sample.turns.length; index++) {
      const advantage = sample.advantages[index]!;
      if (advantage !== 0 && !sample.turns[index]!.error) yield { sample, index, advantage };
    }
  }
}

/**
 * The running sums behind a step's metrics: the objective over all counted turns (divided by D at the end,
 * as the gradient is), the others as means over those turns.
 */
export class SurrogateTally {
  private n = 0;
  private objective = 0;
  private clipped = 0;
  private kl = 0;
  private entropy = 0;

  /** Counts one turn: its old and new log-probabilities, the policy's entropy there and its clipped term. */
  add(oldLogp: number, logp: number, entropy: number, term: { objective: number; clipped: boolean }, bonus = 0): void {
    this.n++;
    this.kl += oldLogp - logp;
    this.entropy += entropy;
    this.objective += term.objective + bonus;
    if (term.clipped) this.clipped++;
  }

  /** D for these turns (0 when none counted, so nothing is divided). */
  divisor(normalise: Normalise, samples: readonly { turns: readonly unknown[] }[]): number {
    return this.n > 0 ? surrogateDivisor(normalise, this.n, samples) : 0;
  }

  metrics(D: number): { turns: number; loss: number; clipFraction: number; approxKl: number; entropy: number } {
    const n = this.n;
    return {
      turns: n,
      loss: D ? -this.objective / D : 0,
      clipFraction: n ? this.clipped / n : 0,
      approxKl: n ? this.kl / n : 0,
      entropy: n ? this.entropy / n : 0,
    };
  }
}
