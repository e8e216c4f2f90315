/**
 * trace-rl's fork extension of both server protocols (docs/environments.md, "Make your server
 * forkable"): a server that can copy an environment's state offers to keep a session's state at a turn
 * and to open a new session from it, so a continuation starts at its prefix with no environment step
 * replayed. Version 1:
 *   discovery  GET /fork → {"version": 1, "max_kept": n, "ttl_s": s}   (a 404 or any other answer: no fork)
 *   keep       a step asks with "keep": true (OpenEnv: beside "type" and "data"; AgentGym: in /step's body)
 *              and the answer carries "kept": "<key>" (OpenEnv: in the observation envelope's data)
 *   fork       OpenEnv: a new /ws session's first message {"type": "fork", "data": {"key"}}
 *              AgentGym: POST /fork {"id", "key"} on an id from /create
 *              → the kept turn's answer (observation, reward, done, side channel), as a reset answers
 * A kept state is a copy: forking leaves it kept, so one prefix gives several continuations. The server
 * bounds what it keeps (at most max_kept, oldest dropped first, each for at most ttl_s seconds); an
 * unknown or expired key is refused, and the client restores that prefix by replay instead.
 *
 * This module is the client's part that needs no connection: the offer's reading, and the keys kept
 * by prefix (bounded like the server's store, so a long run holds no more keys than servers keep).
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';

export interface ForkOffer {
  /** Most states the server keeps at once. */
  maxKept: number;
  /** Seconds a kept state lives. */
  ttlS: number;
}

const offerSchema = z.object({ version: z.literal(1), max_kept: z.number().int().min(1), ttl_s: z.number().positive() }).passthrough();

/** GET /fork's answer read as an offer; anything else (an older version, a stray route) is no offer. */
export function parseForkOffer(raw: unknown): ForkOffer | undefined {
  const o = offerSchema.safeParse(raw);
  return o.success ? { maxKept: o.data.max_kept, ttlS: o.data.ttl_s } : undefined;
}

/** A key a server gave must be short printable text (it goes back into a request). */
export const keptKeySchema = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[\x21-\x7e]+$/, 'printable ASCII without spaces');

/** The identity of a prefix: its task and every action text sent with the observation it got. */
export function prefixKey(taskId: string, steps: ReadonlyArray<{ text: string; observation: string }>): string {
  const h = createHash('sha256');
  h.update(JSON.stringify(taskId));
  for (const s of steps) h.update(JSON.stringify([s.text, s.observation]));
  return h.digest('base64url');
}

/** Where a kept state lives: the server (an index into the run's servers) and its key there. */
export interface KeptState {
  server: number;
  key: string;
}

/**
 * The keys servers gave, by prefix: at most `limit` (oldest forgotten first), each forgotten after
 * `ttlMs` (the server has dropped it by then). A key found here may still be gone on the server (it
 * evicted it, or restarted); the fork is then refused and the prefix replayed.
 */
export class KeptStates {
  private readonly byPrefix = new Map<string, KeptState & { until: number }>();

  constructor(
    private readonly limit: number,
    private readonly ttlMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  get size(): number {
    return this.byPrefix.size;
  }

  put(prefix: string, kept: KeptState): void {
    this.byPrefix.delete(prefix);
    this.byPrefix.set(prefix, { ...kept, until: this.now() + this.ttlMs });
    while (this.byPrefix.size > this.limit) this.byPrefix.delete(this.byPrefix.keys().next().value!);
  }

  get(prefix: string): KeptState | undefined {
    const k = this.byPrefix.get(prefix);
    if (!k) return undefined;
    if (k.until <= this.now()) {
      this.byPrefix.delete(prefix);
      return undefined;
    }
    return { server: k.server, key: k.key };
  }

  forget(prefix: string): void {
    this.byPrefix.delete(prefix);
  }
}
