import type { BudgetLedger, TurnReservation } from '../budget/index.ts';
import type { Environment } from '../env/types.ts';
import { isContextOverflow } from '../policy/context-overflow.ts';
import { PolicyCallError } from '../policy/errors.ts';
import type { Policy, PolicyOutput } from '../policy/types.ts';
import type { Action, Prompt, Turn, TurnError } from '../tree/types.ts';
import type { Rng } from '../util/rng.ts';
import { sleep } from '../util/sleep.ts';
import { backoffDelay } from './backoff.ts';
import { isCancellation, type CallGuard } from './call.ts';
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

/** A failed attempt: what went wrong, and whether another attempt may help. */
type Failure = { error: TurnError; retryable: boolean };

const refused = (code: TurnError['code'], message: string) => ({ ok: false as const, error: { code, message } });

/** The failure after the last attempt, naming how many were made. */
const exhausted = (f: Failure, attempt: number, max: number) => refused(f.error.code, `${f.error.message} (attempt ${attempt} of ${max})`);

/**
 * One policy call with retries. Per attempt: a semaphore permit, a reservation in the ledger of one
 * call of up to maxTokensPerTurn tokens (waiting while other calls' reservations may still leave room),
 * the call, then its settlement. A failed attempt settles 0 tokens but counts the call: the request was
 * made and the server spent work on it.
 *
 * The whole loop is one async function, and a reservation that fits is taken without waiting: with
 * thousands of calls in flight, every async function or awaited promise a call passes through stays
 * alive (its frame, promise, reactions and closures) for the call's whole round trip, and each
 * young-generation collection meanwhile copies it.
 */
export async function callPolicy<S>(ctx: CallContext<S>, call: PolicyCall): Promise<Attempted<PolicyOutput>> {
  const max = ctx.settings.retry.maxAttempts;
  const maxTokens = ctx.settings.maxTokensPerTurn;
  for (let attempt = 1; ; attempt++) {
    const key = `${call.nodeId}#${attempt}`;
    // Awaited even when a permit is free: that turn of the microtask queue lets the calls answered
    // meanwhile settle first, and under priced budgets a plan then does not depend on the concurrency
    // (test/rollout/budget-units.test.ts).
    try {
      await ctx.semaphore.acquire(ctx.signal, call.priority);
    } catch {
      return refused('cancelled', 'cancelled while waiting for a request slot');
    }
    let tried: Attempted<PolicyOutput> | Failure;
    try {
      // Checked once the call holds its slot, when the spend of the calls before it is known.
      if (call.admitCost !== undefined && attempt === 1 && ctx.covers && !ctx.covers(call.trajectoryId, call.admitCost))
        return refused('budget', 'the budget left does not cover another trajectory');
      const reservation = ctx.ledger.tryReserveTurn(maxTokens) ?? (await ctx.ledger.reserveTurn(maxTokens, ctx.signal));
      if (!reservation)
        return ctx.signal?.aborted
          ? refused('cancelled', 'cancelled while waiting for the budget')
          : refused('budget', 'the budget ledger refused another policy call');
      try {
        tried = answeredCall(await ctx.tape.policy(key, () => call.guard.run((signal) => ctx.policy.act(policyContext(ctx, call, key, signal)))), reservation);
      } catch (e) {
        tried = failedCall(e, reservation);
      }
    } finally {
      ctx.semaphore.release();
    }
    if ('ok' in tried) return tried;
    if (!tried.retryable || attempt >= max) return exhausted(tried, attempt, max);
    if (!(await backoff(ctx, key, attempt, tried.error, call.rng))) return refused('cancelled', 'cancelled during retry backoff');
  }
}

/** A call that answered, its reservation settled at the tokens it generated. */
function answeredCall(output: PolicyOutput, reservation: TurnReservation): Attempted<PolicyOutput> | Failure {
  const n = output.generatedTokens;
  if (Number.isInteger(n) && n >= 0 && n <= reservation.maxTokens) {
    reservation.settle(n);
    return { ok: true, value: output };
  }
  // A policy that counts more than it was allowed (or no whole count) broke its contract: the call is
  // charged the most it could cost and the turn fails, naming the count, instead of the step failing
  // in the ledger.
  reservation.settle(reservation.maxTokens);
  const message = `the policy reported ${n} generated tokens for a call of at most ${reservation.maxTokens} (engine.maxTokensPerTurn); a policy's generatedTokens must be a whole number within the call's maxTokens`;
  return { error: { code: 'server_error', message }, retryable: false };
}

/** A call that threw, its reservation settled at 0 tokens (released for an error that is not the call's): a final refusal, or a failure a retry may mend. */
function failedCall(e: unknown, reservation: TurnReservation): Failure | { ok: false; error: TurnError } {
  if (isCancellation(e)) {
    reservation.settle(0);
    return refused('cancelled', 'cancelled while the call was in flight');
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

/**
 * One environment step with retries, one async function as callPolicy is. Any error the environment
 * throws is a tool error. A tool that never answers must not stall the step: the policy call's timeout
 * applies (it fails as a tool_error and is retried); cancellation still wins.
 */
export async function stepEnv<S>(
  ctx: CallContext<S>,
  nodeId: string,
  state: S,
  action: Action,
  rng: Rng,
  guard: CallGuard,
): Promise<Attempted<{ record: StepRecord; state?: S }>> {
  const max = ctx.settings.retry.maxAttempts;
  const isToolCall = action.type !== 'answer' && action.type !== 'invalid';
  for (let attempt = 1; ; attempt++) {
    const key = `${nodeId}#${attempt}`;
    if (ctx.signal?.aborted) return refused('cancelled', 'cancelled before the tool call');
    let failure: Failure;
    try {
      const result = await ctx.tape.step(key, () => guard.run((signal) => ctx.env.step(state, action, { signal })));
      if (isToolCall && !result.record.invalid) ctx.ledger.recordToolCall();
      return { ok: true, value: result };
    } catch (e) {
      if (isCancellation(e) || ctx.signal?.aborted) return refused('cancelled', 'cancelled during the tool call');
      if (isToolCall) ctx.ledger.recordToolCall();
      // An environment may mark a failure final (a server that hangs would hang again): no retry.
      const final = (e as { retryable?: unknown } | null)?.retryable === false;
      failure = { error: { code: 'tool_error', message: e instanceof Error ? e.message : String(e) }, retryable: !final };
    }
    if (!failure.retryable || attempt >= max) return exhausted(failure, attempt, max);
    if (!(await backoff(ctx, key, attempt, failure.error, rng))) return refused('cancelled', 'cancelled during retry backoff');
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
