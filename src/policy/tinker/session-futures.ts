/**
 * One `retrieve_futures` long-poll per sampling session, as the SDK runs it
 * (src/tinker/lib/session_futures_poller.py): samples of the session wait here until the engine reports
 * their request complete, then each result is fetched once with `retrieve_future`. A tree's fan-out
 * (many samples at once on one set of weights) is then one held request, not one poll loop per sample.
 *
 * The loop runs only while a sample waits. What the engine answers is bounded: at most 4,096
 * completions a poll, and completions for requests nobody waits on yet (a poll that overtook the
 * sample's own answer) are kept only up to the same number, oldest dropped. A poll that fails (5xx, a
 * dropped connection) is retried `attempts` times in a row with backoff, then every waiting sample
 * fails with that error in one line; a refusal (4xx, a malformed answer) fails them at once.
 */
import { z } from 'zod';
import { PolicyCallError } from '../errors.ts';

const MAX_COMPLETIONS = 4096;

const answerSchema = z.looseObject({
  completions: z.array(z.looseObject({ request_id: z.string().min(1).max(256), state: z.string().max(32).optional() })).max(MAX_COMPLETIONS),
  cursor: z.number().int().min(0),
});

export interface PollOptions {
  /** Asks the engine for completions after `cursor` (the request already carries the session). */
  poll(cursor: number): Promise<Record<string, unknown>>;
  /** The answer refused as the engine's error, in one line naming the endpoint. */
  refuse(message: string): PolicyCallError;
  attempts: number;
  backoffMs: number;
}

interface Waiter {
  resolve(): void;
  reject(e: unknown): void;
}

export class SessionFutures {
  private cursor = 0;
  private readonly waiters = new Map<string, Waiter>();
  /** Completions that came before their sample's waiter, oldest first (a Set keeps insertion order). */
  private readonly early = new Set<string>();
  private running = false;

  constructor(private readonly options: PollOptions) {}

  /** Resolves once the engine reports request `id` complete (finished or failed: `retrieve_future` says which). */
  wait(id: string, signal?: AbortSignal): Promise<void> {
    if (this.early.delete(id)) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        this.waiters.delete(id);
        reject(signal!.reason);
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.set(id, {
        resolve: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        reject: (e) => {
          signal?.removeEventListener('abort', onAbort);
          reject(e);
        },
      });
      if (!this.running) void this.loop();
    });
  }

  private async loop(): Promise<void> {
    this.running = true;
    try {
      for (let failures = 0; this.waiters.size > 0;) {
        let answer: z.infer<typeof answerSchema>;
        try {
          const raw = await this.options.poll(this.cursor);
          const parsed = answerSchema.safeParse(raw);
          if (!parsed.success) throw this.options.refuse(`not a retrieve_futures answer: ${parsed.error.issues[0]!.message}`);
          answer = parsed.data;
        } catch (e) {
          const retryable = e instanceof PolicyCallError && e.retryable;
          // A poll held past our own limit is the engine's "nothing yet": polled again at once.
          if (retryable && e.code === 'timeout') continue;
          if (!retryable || ++failures >= this.options.attempts) {
            this.failAll(retryable ? new PolicyCallError(e.code, `${e.message} (${failures} polls failed in a row)`, true) : e);
            return;
          }
          await new Promise((r) => setTimeout(r, Math.min(this.options.backoffMs * 2 ** (failures - 1), 5000)));
          continue;
        }
        failures = 0;
        this.cursor = answer.cursor;
        for (const { request_id: id } of answer.completions) {
          const waiter = this.waiters.get(id);
          if (waiter) {
            this.waiters.delete(id);
            waiter.resolve();
          } else {
            this.early.add(id);
            if (this.early.size > MAX_COMPLETIONS) this.early.delete(this.early.values().next().value!);
          }
        }
      }
    } finally {
      this.running = false;
    }
  }

  private failAll(e: unknown): void {
    const waiting = [...this.waiters.values()];
    this.waiters.clear();
    for (const w of waiting) w.reject(e);
  }
}
