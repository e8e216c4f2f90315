/**
 * A counting semaphore with a FIFO queue: at most `limit` holders at once. The engine holds one
 * permit per policy request in flight, so thousands of trajectories can share a few servers.
 */
export class Semaphore {
  private held = 0;
  private peak = 0;
  private readonly queue: Array<() => void> = [];

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`semaphore limit must be a positive integer, got ${limit}`);
  }

  /** Permits currently held. */
  get inFlight(): number {
    return this.held;
  }

  /** Most permits ever held at once (tests check it never passes the limit). */
  get maxInFlight(): number {
    return this.peak;
  }

  /** Waits for a permit; rejects with the signal's reason if aborted while queued. */
  acquire(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.held < this.limit) {
      this.take();
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const grant = () => {
        signal?.removeEventListener('abort', onAbort);
        this.take();
        resolve();
      };
      const onAbort = () => {
        const i = this.queue.indexOf(grant);
        if (i >= 0) this.queue.splice(i, 1);
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.push(grant);
    });
  }

  release(): void {
    if (this.held < 1) throw new RangeError('semaphore released more often than acquired');
    this.held -= 1;
    this.queue.shift()?.();
  }

  /** Runs `fn` holding one permit. */
  async with<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    await this.acquire(signal);
    try {
      return await fn();
    } finally {
      this.release();
    }
  }

  private take(): void {
    this.held += 1;
    this.peak = Math.max(this.peak, this.held);
  }
}
