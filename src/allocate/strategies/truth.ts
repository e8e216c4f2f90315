import { MissingInputError } from '../errors.ts';
import type { PrefixCandidate, RootCandidate } from '../types.ts';

export function trueRoot(c: RootCandidate, strategy: string): number {
  if (c.p === undefined)
    throw new MissingInputError(`strategy "${strategy}" needs the true success probability p of prompt "${c.promptId}" (a simulated environment supplies it)`);
  return roundedIntoUnit(c.p);
}

export function truePrefix(c: PrefixCandidate, strategy: string): number {
  if (c.p === undefined)
    throw new MissingInputError(`strategy "${strategy}" needs the true success probability p of prefix "${c.id}" (a simulated environment supplies it)`);
  return roundedIntoUnit(c.p);
}

/**
 * A true probability computed as a sum of products (the simulator's Σ branch p · value) can land a few
 * ulps outside [0, 1], e.g. 1.0000000000000002; only such rounding is clamped — anything further out is
 * left for the solvers to reject as bad input.
 */
export function roundedIntoUnit(p: number): number {
  if (p > 1 && p <= 1 + 1e-9) return 1;
  if (p < 0 && p >= -1e-9) return 0;
  return p;
}
