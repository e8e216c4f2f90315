import type { BudgetLedger, TurnReservation } from '../budget/index.ts';
import type { Environment } from '../env/types.ts';
import { isContextOverflow } from '../policy/context-overflow.ts';
import { PolicyCallError } from '../policy/errors.ts';
import type { Policy, PolicyOutput } from '../policy/types.ts';
import type { Action, Prompt, Turn, TurnError } from '../tree/types.ts';
import type { Rng } from '../util/rng.ts';
import { sleep } from '../util/sleep.ts';
import { backoffDelay } from './backoff.ts';
import { CancelledError, isCancellation, type CallGuard } from './call.ts';
import type { StepRecord, Tape } from './recorder.ts';
import type { Priority, Semaphore } from './semaphore.ts';
import type { EngineSettings } from './settings.ts';

/** What a policy call or a tool step needs of its trajectory. */
export interface CallContext<S> {
  prompt: Prompt;
  rendered: string;
  env: Environment<S>;
  policy: Policy;
  ledger: BudgetLedger;
  settings: EngineSettings;
  semaphore: Semaphore;
  tape: Tape;
  signal?: AbortSignal;
  greedy?: boolean;
  onRetry(key: string, attempt: number, error: TurnError, delayMs: number): void;
  /**
   * Priced budgets only: whether the budget not yet committed covers trajectory `id`, expected to cost
   * this much; true commits it (the engine settles the commitment when the trajectory ends).
   */
  covers?: (id: string, expectedCost: number) => boolean;
}

/** One policy call of a trajectory: where it hangs, what it sees, and (first turn only) its expected cost to admit. */
export interface PolicyCall {
  nodeId: string;
  turns: readonly Turn[];
  trajectoryId: string;
  rng: Rng;
  admitCost?: number;
  /** urgent: a call that finishes work already started (a trajectory's later turn, a continuation), served before new trajectories. */
  priority?: Priority;
  /** The trajectory's call guard: its calls' signal, timeout and cancellation (they run one at a time). */
  guard: CallGuard;
}

export type Attempted<T> = { ok: true; value: T } | { ok: false; error: TurnError };

/** One attempt's outcome: final (success, or a failure no retry helps), or a failure worth retrying. */
type Attempt<T> = { final: Attempted<T> } | { error: TurnError; retryable: boolean };

const failed = (code: TurnError['code'], message: string) => ({ final: { ok: false as const, error: { code, message } } });

/**
 * One policy call with retries. Per attempt: wait for a semaphore permit, reserve (waiting while other
 * calls' reservations may still leave room) one call of up to maxTokensPerTurn tokens in the ledger,
 * call, settle. A failed attempt settles 0 tokens but counts the call: the request was made and the
 * server spent work on it.
 */
export function callPolicy<S>(ctx: CallContext<S>, call: PolicyCall): Promise<Attempted<PolicyOutput>> {
  return withRetries(ctx, call.nodeId, call.rng, (key, attempt) => policyAttempt(ctx, call, key, attempt));
}

/** One environment step with retries; any error the environment throws is a tool error. */
export function stepEnv<S>(
  ctx: CallContext<S>,
  nodeId: string,
  state: S,
  action: Action,
  rng: Rng,
  guard: CallGuard,
): Promise<Attempted<{ record: StepRecord; state?: S }>> {
  return withRetries(ctx, nodeId, rng, (key) => toolAttempt(ctx, key, state, action, guard));
}

/**
 * Attempts `once` until it is final or out of attempts, backing off in between.
 *
 * This and policyAttempt and settled are promise reactions rather than async functions, each taking the
 * turns of the microtask queue its `await`s took (a reaction runs one turn after the promise it waits on
 * settles, as an `await` resumes; each outer promise is resolved with a plain value, never a promise,
 * so no adoption turns are added): the order in which concurrent calls settle decides admissions under
 * priced budgets, and the golden runs pin it. They run once or twice a turn, and 256 calls in flight
 * each kept these three async frames (generator, register file, await closures) alive.
 */
function withRetries<S, T>(ctx: CallContext<S>, nodeId: string, rng: Rng, once: (key: string, attempt: number) => Promise<Attempt<T>>): Promise<Attempted<T>> {
  const max = ctx.settings.retry.maxAttempts;
  return new Promise<Attempted<T>>((resolve, reject) => {
    const attemptOnce = (attempt: number): void => {
      const key = `${nodeId}#${attempt}`;
      Promise.resolve(once(key, attempt)).then((tried) => {
        try {
          if ('final' in tried) return resolve(tried.final);
          if (!tried.retryable || attempt >= max)
            return resolve({ ok: false, error: { ...tried.error, message: `${tried.error.message} (attempt ${attempt} of ${max})` } });
          backoff(ctx, key, attempt, tried.error, rng).then(
            (waited) => (waited ? attemptOnce(attempt + 1) : resolve(failed('cancelled', 'cancelled during retry backoff').final)),
            reject,
          );
        } catch (e) {
          reject(e);
        }
      }, reject);
    };
    attemptOnce(1);
  });
}

/** One attempt of a policy call: a request slot, a ledger reservation, the call (reactions as withRetries's). */
function policyAttempt<S>(ctx: CallContext<S>, call: PolicyCall, key: string, attempt: number): Promise<Attempt<PolicyOutput>> {
  return new Promise<Attempt<PolicyOutput>>((resolve, reject) => {
    let slot: Promise<void>;
    try {
      slot = Promise.resolve(ctx.semaphore.acquire(ctx.signal, call.priority));
    } catch {
      return resolve(failed('cancelled', 'cancelled while waiting for a request slot'));
    }
    // Once the slot is held, every way out releases it, then settles the attempt.
    const done = (value: Attempt<PolicyOutput>) => {
      ctx.semaphore.release();
      resolve(value);
    };
    const fail = (e: unknown) => {
      ctx.semaphore.release();
      reject(e);
    };
    const reserved = (reservation: TurnReservation | null) => {
      try {
        if (!reservation)
          return done(
            ctx.signal?.aborted
              ? failed('cancelled', 'cancelled while waiting for the budget')
              : failed('budget', 'the budget ledger refused another policy call'),
          );
        settled(reservation, () =>
          ctx.tape.policy(`policy:${key}`, () => call.guard.run((signal) => ctx.policy.act(policyContext(ctx, call, key, signal)))),
        ).then(done, fail);
      } catch (e) {
        fail(e);
      }
    };
    slot.then(
      () => {
        try {
          // Checked once the call holds its slot, when the spend of the calls before it is known.
          if (call.admitCost !== undefined && attempt === 1 && ctx.covers && !ctx.covers(call.trajectoryId, call.admitCost))
            return done(failed('budget', 'the budget left does not cover another trajectory'));
          Promise.resolve(ctx.ledger.reserveTurn(ctx.settings.maxTokensPerTurn, ctx.signal)).then(reserved, fail);
        } catch (e) {
          fail(e);
        }
      },
      () => resolve(failed('cancelled', 'cancelled while waiting for a request slot')),
    );
  });
}

function policyContext<S>(ctx: CallContext<S>, call: PolicyCall, key: string, signal: AbortSignal) {
  return {
    prompt: ctx.prompt,
    rendered: ctx.rendered,
    turns: call.turns,
    rng: call.rng.fork(key),
    greedy: ctx.greedy,
    maxTokens: ctx.settings.maxTokensPerTurn,
    signal,
    callId: key,
    trajectoryId: call.trajectoryId,
  };
}

/** Runs a reserved call and settles its reservation: the tokens it generated, or 0 when it failed (reactions as withRetries's). */
function settled(reservation: TurnReservation, run: () => Promise<PolicyOutput>): Promise<Attempt<PolicyOutput>> {
  let answer: Promise<PolicyOutput>;
  try {
    answer = Promise.resolve(run());
  } catch (e) {
    // A synchronous throw settles at once, as the async function's catch did.
    try {
      return Promise.resolve(callFailed(reservation, e));
    } catch (thrown) {
      return Promise.reject(thrown);
    }
  }
  return answer.then(
    (output) => {
      const n = output.generatedTokens;
      if (!(Number.isInteger(n) && n >= 0 && n <= reservation.maxTokens)) {
        // A policy that counts more than it was allowed (or no whole count) broke its contract: the call is
        // charged the most it could cost and the turn fails, naming the count, instead of the step failing
        // in the ledger.
        reservation.settle(reservation.maxTokens);
        const message = `the policy reported ${n} generated tokens for a call of at most ${reservation.maxTokens} (engine.maxTokensPerTurn); a policy's generatedTokens must be a whole number within the call's maxTokens`;
        return { error: { code: 'server_error', message }, retryable: false };
      }
      reservation.settle(n);
      return { final: { ok: true, value: output } };
    },
    (e: unknown) => callFailed(reservation, e),
  );
}

/** A reserved call that failed: its reservation settled (or released), and the attempt's outcome; rethrows what is not a call's failure. */
function callFailed(reservation: TurnReservation, e: unknown): Attempt<PolicyOutput> {
  if (isCancellation(e)) {
    reservation.settle(0);
    return failed('cancelled', 'cancelled while the call was in flight');
  }
  if (!(e instanceof PolicyCallError)) {
    reservation.release();
    throw e;
  }
  reservation.settle(0);
  // A refused request (4xx) whose server says the prompt outgrew the context: the trajectory is too
  // long, not the server broken (clients map HTTP errors to server_error; only the words tell).
  if (e.code === 'server_error' && !e.retryable && isContextOverflow(e.message))
    return { error: { code: 'context_overflow', message: e.message }, retryable: false };
  return { error: { code: e.code, message: e.message }, retryable: e.retryable && e.code !== 'context_overflow' };
}

async function toolAttempt<S>(
  ctx: CallContext<S>,
  key: string,
  state: S,
  action: Action,
  guard: CallGuard,
): Promise<Attempt<{ record: StepRecord; state?: S }>> {
  const isToolCall = action.type !== 'answer' && action.type !== 'invalid';
  if (ctx.signal?.aborted) return failed('cancelled', 'cancelled before the tool call');
  try {
    // A tool that never answers must not stall the step: the same timeout as a policy call applies
    // (it fails as a tool_error and is retried); cancellation still wins.
    const result = await ctx.tape.step(`tool:${key}`, async () => {
      try {
        return await guard.run((signal) => ctx.env.step(state, action, { signal }));
      } catch (e) {
        if (ctx.signal?.aborted) throw new CancelledError('cancelled');
        throw e;
      }
    });
    if (isToolCall && !result.record.invalid) ctx.ledger.recordToolCall();
    return { final: { ok: true, value: result } };
  } catch (e) {
    if (isCancellation(e)) return failed('cancelled', 'cancelled during the tool call');
    if (isToolCall) ctx.ledger.recordToolCall();
    // An environment may mark a failure final (a server that hangs would hang again): no retry.
    const final = (e as { retryable?: unknown } | null)?.retryable === false;
    return { error: { code: 'tool_error', message: e instanceof Error ? e.message : String(e) }, retryable: !final };
  }
}

async function backoff<S>(ctx: CallContext<S>, key: string, attempt: number, error: TurnError, rng: Rng): Promise<boolean> {
  // Replays skip the wait: the outcome is already on the tape.
  const delay = ctx.tape.mode === 'replay' ? 0 : backoffDelay(attempt, ctx.settings.retry, rng.fork(`backoff/${key}`));
  ctx.onRetry(key, attempt, error, delay);
  try {
    await sleep(delay, ctx.signal);
    return true;
  } catch {
    return false;
  }
}
