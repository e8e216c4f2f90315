/**
 * A counting semaphore with FIFO queues: at most `limit` holders at once. The engine holds one
 * permit per policy request in flight, so thousands of trajectories can share a few servers.
 *
 * Waiting is O(1) per request however many wait: each queue is a deque indexed from its head (an
 * array's `shift` moves every element), an aborted waiter is marked and skipped rather than searched
 * for, and a signal gets one abort listener per semaphore, not one per waiter (a step's trajectories
 * share one signal; adding a listener per waiter made queuing quadratic at tens of thousands).
 *
 * Two priorities: `urgent` waiters (a prompt's continuations, which finish its tree) are granted
 * before `normal` ones (new bare rollouts), so prompts complete early and expansion overlaps the rest.
 */
export type Priority = 'urgent' | 'normal';

interface Waiter {
  grant: () => void;
  reject: (reason: unknown) => void;
  signal?: AbortSignal;
  done: boolean;
}

/** What a free permit answers: one settled promise for every call (awaiting it takes the same turn as a new one). */
const GRANTED = Promise.resolve();

/** A FIFO queue with O(1) push and shift. */
class Deque<T> {
  private items: (T | undefined)[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(x: T): void {
    this.items.push(x);
  }

  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const x = this.items[this.head];
    this.items[this.head++] = undefined;
    // Compact once the consumed half dominates, so memory follows the live length.
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return x;
  }
}

export class Semaphore {
  private held = 0;
  private peak = 0;
  private live = 0;
  private readonly queues: Record<Priority, Deque<Waiter>> = { urgent: new Deque(), normal: new Deque() };
  /** Waiters per signal, with the signal's one listener. */
  private readonly bySignal = new Map<AbortSignal, { waiters: Set<Waiter>; onAbort: () => void }>();

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

  /** Requests waiting for a permit. */
  get waiting(): number {
    return this.live;
  }

  /** Waits for a permit; rejects with the signal's reason if aborted while queued. */
  acquire(signal?: AbortSignal, priority: Priority = 'normal'): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.held < this.limit) {
      this.take();
      return GRANTED;
    }
    return new Promise<void>((resolve, reject) => {
      const w: Waiter = { grant: resolve, reject, done: false, ...(signal ? { signal } : {}) };
      if (signal) this.watch(signal).add(w);
      this.queues[priority].push(w);
      this.live++;
    });
  }

  release(): void {
    if (this.held < 1) throw new RangeError('semaphore released more often than acquired');
    this.held -= 1;
    for (;;) {
      const w = this.queues.urgent.shift() ?? this.queues.normal.shift();
      if (!w) return;
      if (w.done) continue;
      this.settle(w);
      this.take();
      w.grant();
      return;
    }
  }

  /** Runs `fn` holding one permit. */
  async with<T>(fn: () => Promise<T>, signal?: AbortSignal, priority: Priority = 'normal'): Promise<T> {
    await this.acquire(signal, priority);
    try {
      return await fn();
    } finally {
      this.release();
    }
  }

  private watch(signal: AbortSignal): Set<Waiter> {
    let entry = this.bySignal.get(signal);
    if (!entry) {
      const waiters = new Set<Waiter>();
      const onAbort = () => {
        this.bySignal.delete(signal);
        for (const w of waiters) {
          w.done = true;
          this.live--;
          w.reject(signal.reason);
        }
        waiters.clear();
      };
      signal.addEventListener('abort', onAbort, { once: true });
      entry = { waiters, onAbort };
      this.bySignal.set(signal, entry);
    }
    return entry.waiters;
  }

  /** Marks `w` granted and drops it from its signal's set; the signal's listener goes with its last waiter. */
  private settle(w: Waiter): void {
    w.done = true;
    this.live--;
    if (!w.signal) return;
    const entry = this.bySignal.get(w.signal);
    if (!entry) return;
    entry.waiters.delete(w);
    if (entry.waiters.size === 0) {
      w.signal.removeEventListener('abort', entry.onAbort);
      this.bySignal.delete(w.signal);
    }
  }

  private take(): void {
    this.held += 1;
    this.peak = Math.max(this.peak, this.held);
  }
}
