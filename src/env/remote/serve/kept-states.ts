/**
 * The states `trace-rl env serve` keeps for the fork extension (../fork.ts), bounded so that no client
 * can exhaust the server: at most `limit` at once (keeping one more drops the oldest) and each for at
 * most `ttlMs` (an expired one is refused as unknown). Keys are random, so a client forks only the
 * states it was given.
 */
import { randomBytes } from 'node:crypto';

export class KeptStore<T> {
  private readonly byKey = new Map<string, { value: T; until: number }>();

  constructor(
    readonly limit: number,
    readonly ttlMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** States kept now (expired ones not yet swept included). */
  get size(): number {
    return this.byKey.size;
  }

  keep(value: T): string {
    this.sweep();
    const key = randomBytes(12).toString('base64url');
    this.byKey.set(key, { value, until: this.now() + this.ttlMs });
    while (this.byKey.size > this.limit) this.byKey.delete(this.byKey.keys().next().value!);
    return key;
  }

  /** The state kept under `key`, still kept (a fork copies it), or undefined when unknown or expired. */
  get(key: string): T | undefined {
    const k = this.byKey.get(key);
    if (!k) return undefined;
    if (k.until <= this.now()) {
      this.byKey.delete(key);
      return undefined;
    }
    return k.value;
  }

  /** Drops the expired states (insertion order is expiry order: one TTL for all). */
  private sweep(): void {
    const now = this.now();
    for (const [key, k] of this.byKey) {
      if (k.until > now) break;
      this.byKey.delete(key);
    }
  }
}
