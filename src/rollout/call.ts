import { setMaxListeners } from 'node:events';
import { PolicyCallError } from '../policy/errors.ts';
import { unwatchAbort, watchAbort, type AbortWatcher } from '../util/abort-watch.ts';
import { MAX_TIMER_MS } from '../util/timer.ts';

/** Internal: the run was cancelled while this call was in flight or queued. */
export class CancelledError extends Error {
  override name = 'CancelledError';
}

export function isCancellation(e: unknown): boolean {
  return e instanceof CancelledError;
}

/**
 * What guards a trajectory's calls: their abort signal, their timeout and the run's cancellation. A
 * trajectory makes one call at a time (a policy call, then a tool step), so its calls share one of each
 * instead of making their own, which was a large share of the engine's own cost a turn at scale
 * (bench/scale):
 *  - one AbortController until a call is aborted (its timeout, the run's cancellation), then a fresh one
 *    for the next call. An AbortSignal is a costly object in Node (an event target with its own
 *    bookkeeping, about 4 µs to make, and its share of garbage collection);
 *  - each call's promise settles by its callee or by the abort, whichever comes first, so a callee
 *    that ignores its signal still cannot hold the engine past the timeout;
 *  - one timer, re-armed lazily: each call moves the deadline, and the timer, when it fires, aborts the
 *    call in flight only if that call's deadline has passed (else it waits out the rest). A timer set and
 *    cleared per call cost a Timeout object and two list operations a call;
 *  - one watcher of the run's signal (util/abort-watch.ts: the signal itself carries one listener).
 * `close` (the trajectory ended) clears the timer and the watcher.
 */
export class CallGuard implements AbortWatcher {
  private ctl: AbortController | undefined;
  /** Rejects the call in flight (its abort). */
  private rejectCall: (reason: unknown) => void = () => undefined;
  private timer: NodeJS.Timeout | undefined;
  /** When the armed timer fires (performance.now() ms). */
  private timerAt = 0;
  /** When the call in flight times out. */
  private deadline = 0;
  private inFlight = false;
  private timedOut = false;
  private watching = false;

  constructor(
    private readonly timeoutMs: number,
    private readonly runSignal?: AbortSignal,
  ) {}

  /**
   * Runs `fn` with an AbortSignal that fires on the run's cancellation or after the timeout.
   * Timeout → PolicyCallError('timeout'); run cancelled → CancelledError; otherwise fn's own error.
   *
   * Written as promise reactions rather than an async function, with the same turns of the microtask
   * queue as one (`await` of the race, then the caller's): the order in which concurrent calls settle
   * decides admissions under priced budgets, and the golden runs pin it. It runs twice a turn, and an
   * async function's frame, its await's reactions and closures were a good part of a turn's garbage.
   */
  run<T>(fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
    if (this.runSignal?.aborted) return Promise.reject(new CancelledError('cancelled before the call started'));
    const signal = this.begin();
    let answer: Promise<T>;
    try {
      answer = fn(signal);
    } catch (e) {
      return Promise.reject(this.ended(e)); // a synchronous throw, caught as the async function's catch did
    }
    // The race of Promise.race, with the abort settling it directly: the same microtasks as that race,
    // without an array, a second promise or a reaction left on a shared one.
    const race = new Promise<T>((resolve, reject) => {
      this.rejectCall = reject;
      Promise.resolve(answer).then(resolve, reject);
    });
    return race.then(this.answered as (value: T) => T, this.failed);
  }

  /** The call in flight ended with a value (the race's reaction; one function per guard, not per call). */
  private readonly answered = <T>(value: T): T => {
    this.inFlight = false;
    return value;
  };

  /** The call in flight ended with `e`: the error it is reported as. */
  private readonly failed = (e: unknown): never => {
    throw this.ended(e);
  };

  /** Marks the call ended and names its failure: its timeout, the run's cancellation, or its own error. */
  private ended(e: unknown): unknown {
    this.inFlight = false;
    if (this.timedOut) return new PolicyCallError('timeout', `no answer after ${this.timeoutMs} ms`);
    if (this.runSignal?.aborted) return new CancelledError('cancelled');
    return e;
  }

  /** The trajectory ended: no timer or watcher outlives it. */
  close(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.watching) unwatchAbort(this.runSignal!, this);
    this.watching = false;
  }

  private begin(): AbortSignal {
    if (this.ctl === undefined || this.ctl.signal.aborted) this.ctl = new AbortController();
    if (this.runSignal && !this.watching) {
      watchAbort(this.runSignal, this);
      this.watching = true;
    }
    this.inFlight = true;
    this.timedOut = false;
    this.deadline = performance.now() + this.timeoutMs;
    // Deadlines only move later (one timeout for all calls), so an armed timer fires first and re-arms.
    if (this.timer === undefined || this.timerAt > this.deadline) this.arm(this.timeoutMs);
    return this.ctl.signal;
  }

  private arm(ms: number): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    // A timeout past Node's limit (about 25 days) waits the limit and re-arms for the rest.
    const wait = Math.min(ms, MAX_TIMER_MS);
    this.timerAt = performance.now() + wait;
    this.timer = setTimeout(this.onTimer, wait);
  }

  private readonly onTimer = (): void => {
    this.timer = undefined;
    if (!this.inFlight) return;
    // Node's timers run on the loop's millisecond clock, so one may fire a fraction of a millisecond early.
    const left = this.deadline - performance.now();
    if (left > 0) return this.arm(Math.ceil(left));
    this.timedOut = true;
    this.abort(new PolicyCallError('timeout', `no answer after ${this.timeoutMs} ms`));
  };

  onSignalAbort(): void {
    this.abort(new CancelledError('cancelled'));
  }

  /** Aborts the call in flight (none in flight: the next call checks the run's signal itself). */
  private abort(reason: unknown): void {
    if (!this.inFlight) return;
    this.ctl!.abort(reason);
    this.rejectCall(reason);
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
