import { PolicyCallError } from '../errors.ts';

/**
 * Routing over several inference servers that keeps every trajectory, and every continuation restored
 * from a prefix of it, on the server that served it, so that server's prefix cache already holds the
 * history the next call sends. A route key is the trajectory's first node id, a path in the tree
 * (`q1/0/2/1`): a key seen before keeps its server; a new key whose ancestor (`q1/0/2`, `q1/0`) was a
 * routed trajectory is a continuation of it and takes that server; any other key (a bare rollout) goes
 * to the least-loaded server. A key leaves its server only when that server fails (the caller says so
 * with `failed()`: a connection failure, a timeout, a 5xx), or, when `slack` is given, when it has more
 * than `slack` requests in flight above the least-loaded one. A failed server gets no new routes for
 * `cooldownMs` unless every server is down, and is back as soon as it answers a request. Ties go to the
 * lowest index, so routing is deterministic for a given order of calls.
 */
export interface RouterOptions {
  /** Move a sticky key when its server has more than this many requests in flight above the least-loaded one (default: never, for load). */
  slack?: number;
  /** Routes remembered; the least recently used are forgotten first (default 100,000). */
  maxSticky?: number;
  /** How long a failed server is passed over (default 10 s). */
  cooldownMs?: number;
  /** Milliseconds clock for the cool-down (default Date.now). */
  now?: () => number;
}

/** One routed request: where it goes, and what to call when it ends. */
export interface Route {
  index: number;
  url: string;
  /** The request ended (answered, or failed in a way that says nothing about the server). */
  done(): void;
  /** The request ended because the server failed: the key moves, and the server rests. */
  failed(): void;
}

export class Router {
  private readonly load: number[];
  private readonly sticky = new Map<string, number>();
  /** Per server, until when it is passed over after a failure. */
  private readonly downUntil: number[];

  constructor(
    readonly urls: readonly string[],
    private readonly options: RouterOptions = {},
  ) {
    if (urls.length === 0) throw new RangeError('Router needs at least one base URL');
    this.load = urls.map(() => 0);
    this.downUntil = urls.map(() => -Infinity);
  }

  /** In-flight requests per server. */
  inFlight(): number[] {
    return [...this.load];
  }

  /** The server a key is routed to now, if it has a route (its own or an ancestor's). */
  routeOf(key: string): number | undefined {
    return this.sticky.get(key) ?? this.inherited(key);
  }

  /** Picks a server for one request of `key` (a trajectory's first node id) and counts it in flight. */
  acquire(key?: string): Route {
    const now = (this.options.now ?? Date.now)();
    // The least-loaded server among those up (all of them when none is). Loops, not array methods: this
    // runs once a request.
    let anyUp = false;
    for (const until of this.downUntil) anyUp ||= until <= now;
    let min = Infinity;
    let least = 0;
    for (let i = 0; i < this.load.length; i++)
      if ((!anyUp || this.downUntil[i]! <= now) && this.load[i]! < min) {
        min = this.load[i]!;
        least = i;
      }
    const prev = key === undefined ? undefined : this.routeOf(key);
    const slack = this.options.slack ?? Infinity;
    const keep = prev !== undefined && (!anyUp || this.downUntil[prev]! <= now) && this.load[prev]! <= min + slack;
    const index = keep ? prev : least;
    if (key !== undefined) this.remember(key, index);
    this.load[index]! += 1;
    return new Lease(this, index);
  }

  /** A request on server `index` ended; `failed`: because the server failed. */
  end(index: number, failed: boolean): void {
    this.load[index]! -= 1;
    if (failed) this.downUntil[index] = (this.options.now ?? Date.now)() + (this.options.cooldownMs ?? 10_000);
    else this.downUntil[index] = -Infinity;
  }

  /** The route of the deepest ancestor path of `key` that has one: the trajectory a continuation was restored from. */
  private inherited(key: string): number | undefined {
    for (let cut = key.lastIndexOf('/'); cut > 0; cut = key.lastIndexOf('/', cut - 1)) {
      const found = this.sticky.get(key.slice(0, cut));
      if (found !== undefined) return found;
    }
    return undefined;
  }

  private remember(key: string, index: number): void {
    this.sticky.delete(key);
    this.sticky.set(key, index);
    // Bounded memory: forget the least recently routed keys first.
    const cap = this.options.maxSticky ?? 100_000;
    while (this.sticky.size > cap) this.sticky.delete(this.sticky.keys().next().value!);
  }
}

/** One request's route, ended once (a second done() or failed() does nothing). An object, not two closures a call. */
class Lease implements Route {
  readonly url: string;
  private open = true;

  constructor(
    private readonly router: Router,
    readonly index: number,
  ) {
    this.url = router.urls[index]!;
  }

  done(): void {
    this.close(false);
  }

  failed(): void {
    this.close(true);
  }

  private close(failed: boolean): void {
    if (!this.open) return;
    this.open = false;
    this.router.end(this.index, failed);
  }
}

/**
 * Whether a failed call says its server is failing, so its keys should move: a connection failure, a
 * 5xx, 408/409/429 (retryable errors), or the engine's timeout (the call's signal aborted with a
 * timeout). A 4xx is the request's own fault and a cancelled run is nobody's.
 */
export function serverFailed(error: unknown, signal?: AbortSignal): boolean {
  if (error instanceof PolicyCallError) return error.retryable;
  return signal?.aborted === true && signal.reason instanceof PolicyCallError && signal.reason.code === 'timeout';
}
