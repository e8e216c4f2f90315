import { EngineError } from './step-options.ts';

/** What a planner's counts must keep to: ids it may name (described as `knownAs`), and a total within `limit`. */
export interface CountsRule {
  known: { has(id: string): boolean };
  /** Ends "…, which is not <knownAs>". */
  knownAs: string;
  limit?: number;
  /** What the total counts, for the message: trajectories, or their cost in turns or tokens. */
  what?: string;
  /** Each id's cost per count (absent: 1). */
  cost?: ReadonlyMap<string, number>;
}

/**
 * A planner's counts, checked before anything runs: known ids, non-negative integers, and a total
 * (each count times its cost) within the limit. Returns the total; a breach is an EngineError.
 */
export function checkCounts(plan: ReadonlyMap<string, number>, who: string, symbol: string, rule: CountsRule): number {
  let total = 0;
  for (const [id, n] of plan) {
    if (!rule.known.has(id)) throw new EngineError(`${who} names "${id}", which is not ${rule.knownAs}`);
    if (!Number.isInteger(n) || n < 0) throw new EngineError(`${who} gives "${id}" ${symbol} = ${n}; ${symbol} must be a non-negative integer`);
    total += n * (rule.cost?.get(id) ?? 1);
  }
  if (rule.limit !== undefined && total > rule.limit) throw new EngineError(`${who} spends ${total} ${rule.what} but only ${rule.limit} are available`);
  return total;
}
