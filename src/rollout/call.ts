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
 * Runs `fn` with its own AbortSignal that fires on the run's cancellation or after `timeoutMs`.
 * The race means a callee that ignores its signal still cannot hold the engine past the timeout.
 * Timeout → PolicyCallError('timeout'); run cancelled → CancelledError; otherwise fn's own error.
 */
export async function callWithTimeout<T>(fn: (signal: AbortSignal) => Promise<T>, timeoutMs: number, runSignal?: AbortSignal): Promise<T> {
  if (runSignal?.aborted) throw new CancelledError('cancelled before the call started');
  const ctl = new AbortController();
  let timedOut = false;
  const onRunAbort = () => ctl.abort(new CancelledError('cancelled'));
  runSignal?.addEventListener('abort', onRunAbort, { once: true });
  const timer = setTimeout(() => {
    timedOut = true;
    ctl.abort(new PolicyCallError('timeout', `no answer after ${timeoutMs} ms`));
  }, timeoutMs);
  const aborted = new Promise<never>((_, reject) => {
    ctl.signal.addEventListener('abort', () => reject(ctl.signal.reason), { once: true });
  });
  try {
    return await Promise.race([fn(ctl.signal), aborted]);
  } catch (e) {
    if (timedOut) throw new PolicyCallError('timeout', `no answer after ${timeoutMs} ms`);
    if (runSignal?.aborted) throw new CancelledError('cancelled');
    throw e;
  } finally {
    clearTimeout(timer);
    runSignal?.removeEventListener('abort', onRunAbort);
  }
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
