import { setMaxListeners } from 'node:events';
import { PolicyCallError } from '../policy/errors.ts';

/** Internal: the run was cancelled while this call was in flight or queued. */
export class CancelledError extends Error {
  override name = 'CancelledError';
}

export function isCancellation(e: unknown): boolean {
  return e instanceof CancelledError;
}

/**
 * The abort controller a trajectory's calls share. A trajectory makes one call at a time (a policy
 * call, then a tool step), so every call can carry the same signal until one of them is aborted (its
 * timeout, or the run's cancellation); the next call then gets a fresh controller. An AbortSignal is a
 * costly object in Node (an event target with its own bookkeeping, about 4 µs to make, and its share of
 * garbage collection): two new ones a turn were the largest single cost of the engine's turn
 * (bench/scale, mode engine: 85 → 70 µs a turn).
 */
export class CallSignals {
  private ctl: AbortController | undefined;

  /** A controller not yet aborted: the current one, or a fresh one when it was. */
  take(): AbortController {
    if (this.ctl === undefined || this.ctl.signal.aborted) this.ctl = new AbortController();
    return this.ctl;
  }
}

/**
 * Runs `fn` with an AbortSignal that fires on the run's cancellation or after `timeoutMs` (the
 * trajectory's shared one from `signals`).
 * The race means a callee that ignores its signal still cannot hold the engine past the timeout.
 * Timeout → PolicyCallError('timeout'); run cancelled → CancelledError; otherwise fn's own error.
 * Both ends of the race are settled directly by whoever aborts (the timer, the run's one watcher), so a
 * call adds no listener to the run's signal and none to its own: with thousands of calls a second
 * through one shared signal, adding and removing listeners was a visible share of a call's cost.
 */
export async function callWithTimeout<T>(
  fn: (signal: AbortSignal) => Promise<T>,
  timeoutMs: number,
  signals: CallSignals,
  runSignal?: AbortSignal,
): Promise<T> {
  if (runSignal?.aborted) throw new CancelledError('cancelled before the call started');
  const ctl = signals.take();
  let timedOut = false;
  let fail!: (reason: unknown) => void;
  const aborted = new Promise<never>((_, reject) => (fail = reject));
  const abort = (reason: unknown) => {
    ctl.abort(reason);
    fail(reason);
  };
  const unwatch = runSignal ? whenAborted(runSignal, () => abort(new CancelledError('cancelled'))) : undefined;
  const timer = setTimeout(() => {
    timedOut = true;
    abort(new PolicyCallError('timeout', `no answer after ${timeoutMs} ms`));
  }, timeoutMs);
  try {
    return await Promise.race([fn(ctl.signal), aborted]);
  } catch (e) {
    if (timedOut) throw new PolicyCallError('timeout', `no answer after ${timeoutMs} ms`);
    if (runSignal?.aborted) throw new CancelledError('cancelled');
    throw e;
  } finally {
    clearTimeout(timer);
    unwatch?.();
  }
}

/** Per signal, the calls to tell when it aborts; the signal itself carries one listener for all of them. */
const watchers = new WeakMap<AbortSignal, Set<() => void>>();

/** Calls `onAbort` when `signal` aborts (once); the returned function stops watching. O(1) either way. */
export function whenAborted(signal: AbortSignal, onAbort: () => void): () => void {
  let set = watchers.get(signal);
  if (!set) {
    const calls = (set = new Set());
    watchers.set(signal, calls);
    signal.addEventListener(
      'abort',
      () => {
        for (const f of [...calls]) f();
        calls.clear();
      },
      { once: true },
    );
  }
  set.add(onAbort);
  return () => void set.delete(onAbort);
}

/**
 * A step's own signal, linked to the caller's: every queued request listens to it, so Node's listener
 * warning is lifted on this signal instead of the caller's. `detach` removes the caller's listener
 * again when the step ends: a long run passes one signal to every step.
 */
export function linkedSignal(caller?: AbortSignal): { signal: AbortSignal; detach: () => void } {
  const own = new AbortController();
  setMaxListeners(0, own.signal);
  const onAbort = () => own.abort(caller!.reason);
  if (caller?.aborted) own.abort(caller.reason);
  caller?.addEventListener('abort', onAbort, { once: true });
  return { signal: own.signal, detach: () => caller?.removeEventListener('abort', onAbort) };
}
