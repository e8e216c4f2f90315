/**
 * BFCL's multi-turn checker. Model and ground truth each run on their own instances, turn by turn.
 * After every turn whose ground truth has calls:
 *   1. the model must have made at least one non-empty step (else `multi_turn:empty_turn_model_response`);
 *   2. every involved instance's public attributes must equal the ground truth's
 *      (else `multi_turn:instance_state_mismatch`);
 *   3. each result the ground truth produced this turn must appear among the model's results of this
 *      and all earlier turns, as a multiset and in any order (else `multi_turn:execution_response_mismatch`).
 * A turn whose ground truth is empty (miss_func / miss_param: the model should ask, not act) is not
 * checked, but the model's calls in it still run so later turns see their effects — BFCL's current
 * evaluation does the same. An attempt with a different number of turns fails as
 * `multi_turn:force_terminated` (the harness stopped it, e.g. after too many steps in a turn).
 */
import type { BfclApi } from './apis/api.ts';
import { SharedState } from './apis/shared.ts';
import type { BfclEntry } from './data.ts';
import { Session } from './executor.ts';
import { pyEquals, type PyDict, type PyValue } from './py/value.ts';
import type { ApiContext } from './apis/api.ts';

export const ERROR_TYPES = [
  'multi_turn:empty_turn_model_response',
  'multi_turn:instance_state_mismatch',
  'multi_turn:execution_response_mismatch',
  'multi_turn:force_terminated',
] as const;
export type ErrorType = (typeof ERROR_TYPES)[number];

export interface CheckResult {
  valid: boolean;
  errorType: ErrorType | null;
  /** The turn that failed. */
  turn?: number;
  message?: string;
}

export interface CheckOptions {
  longContextData: PyDict;
  today: ApiContext['today'];
}

/** The model's attempt: per turn, per model step, the calls it made (BFCL's decoded results). */
export type Attempt = readonly (readonly (readonly string[])[])[];

/** Public attributes whose values differ between two instances of one class. */
export function stateDifferences(model: BfclApi, truth: BfclApi): string[] {
  const mine = new Map(model.state());
  return truth
    .state()
    .filter(([name, value]) => !pyEquals(mine.get(name) as PyValue, value))
    .map(([name]) => name);
}

/** Ground-truth results missing from the model's results (one model result covers one occurrence). */
export function missingResults(expected: readonly string[], produced: readonly string[]): string[] {
  const pool = [...produced];
  const missing: string[] = [];
  for (const item of expected) {
    const i = pool.indexOf(item);
    if (i < 0) missing.push(item);
    else pool.splice(i, 1);
  }
  return missing;
}

export function checkAttempt(entry: BfclEntry, attempt: Attempt, options: CheckOptions): CheckResult {
  const truth = entry.groundTruth;
  if (attempt.length !== truth.length) {
    return {
      valid: false,
      errorType: 'multi_turn:force_terminated',
      message: `the attempt has ${attempt.length} turns, the ground truth ${truth.length}`,
    };
  }
  const shared = new SharedState(options.longContextData);
  const model = new Session(entry, { shared, today: options.today });
  const reference = new Session(entry, { shared, today: options.today });
  const allModelResults: string[] = [];
  for (const [turn, expectedCalls] of truth.entries()) {
    // Steps that decoded to no call are dropped, as BFCL's evaluation does.
    const steps = (attempt[turn] ?? []).filter((step) => step.length > 0);
    for (const step of steps) allModelResults.push(...model.run(step));
    const expectedResults = reference.run(expectedCalls);
    if (expectedCalls.length === 0) continue;
    if (steps.length === 0) {
      return { valid: false, errorType: 'multi_turn:empty_turn_model_response', turn, message: `Model response list is empty for turn ${turn}` };
    }
    for (const [className, truthApi] of reference.instances) {
      const differences = stateDifferences(model.instances.get(className) as BfclApi, truthApi);
      if (differences.length > 0) {
        return {
          valid: false,
          errorType: 'multi_turn:instance_state_mismatch',
          turn,
          message: `Model instance for ${className} does not match the state with ground truth instance (${differences.join(', ')}).`,
        };
      }
    }
    const missing = missingResults(expectedResults, allModelResults);
    if (missing.length > 0) {
      return {
        valid: false,
        errorType: 'multi_turn:execution_response_mismatch',
        turn,
        message: `Model response execution results so far does not contain all the ground truth response execution results for turn ${turn}: missing ${JSON.stringify(missing)}`,
      };
    }
  }
  return { valid: true, errorType: null };
}

/** Run an attempt and return every call's result text, per turn (all steps of a turn together). */
export function executeAttempt(entry: BfclEntry, attempt: Attempt, options: CheckOptions): string[][] {
  const session = new Session(entry, { shared: new SharedState(options.longContextData), today: options.today });
  return attempt.map((steps) => steps.flatMap((step) => session.run(step)));
}
