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

/** Attempts `once` until it is final or out of attempts, backing off in between. */
async function withRetries<S, T>(
  ctx: CallContext<S>,
  nodeId: string,
  rng: Rng,
  once: (key: string, attempt: number) => Promise<Attempt<T>>,
): Promise<Attempted<T>> {
  const max = ctx.settings.retry.maxAttempts;
  for (let attempt = 1; ; attempt++) {
    const key = `${nodeId}#${attempt}`;
    const tried = await once(key, attempt);
    if ('final' in tried) return tried.final;
    if (!tried.retryable || attempt >= max) return { ok: false, error: { ...tried.error, message: `${tried.error.message} (attempt ${attempt} of ${max})` } };
    if (!(await backoff(ctx, key, attempt, tried.error, rng))) return failed('cancelled', 'cancelled during retry backoff').final;
  }
}

async function policyAttempt<S>(ctx: CallContext<S>, call: PolicyCall, key: string, attempt: number): Promise<Attempt<PolicyOutput>> {
  try {
    await ctx.semaphore.acquire(ctx.signal, call.priority);
  } catch {
    return failed('cancelled', 'cancelled while waiting for a request slot');
  }
  try {
    // Checked once the call holds its slot, when the spend of the calls before it is known.
    if (call.admitCost !== undefined && attempt === 1 && ctx.covers && !ctx.covers(call.trajectoryId, call.admitCost))
      return failed('budget', 'the budget left does not cover another trajectory');
    const reservation = await ctx.ledger.reserveTurn(ctx.settings.maxTokensPerTurn, ctx.signal);
    if (!reservation)
      return ctx.signal?.aborted
        ? failed('cancelled', 'cancelled while waiting for the budget')
        : failed('budget', 'the budget ledger refused another policy call');
    return await settled(reservation, () =>
      ctx.tape.policy(`policy:${key}`, () => call.guard.run((signal) => ctx.policy.act(policyContext(ctx, call, key, signal)))),
    );
  } finally {
    ctx.semaphore.release();
  }
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

/** Runs a reserved call and settles its reservation: the tokens it generated, or 0 when it failed. */
async function settled(reservation: TurnReservation, run: () => Promise<PolicyOutput>): Promise<Attempt<PolicyOutput>> {
  try {
    const output = await run();
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
  } catch (e) {
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
