/**
 * The servers of one environment a run uses (`env.url` naming several): where each new session goes,
 * and what each server did. A session goes to the least-loaded server that is up and below the cap of
 * sessions per server (`env.sessions`); when none has room, requests wait in order (each able to give
 * up with its signal). A server that could not be reached is down for `downMs`: no session goes to it
 * until then, and the next session to try it is its probe (it is used again once it answers). A
 * request for one server in particular (a fork: its kept state lives there) waits for that server, and
 * fails at once when it is down. A server that refused a session because it was full (its own cap below
 * ours, or other clients' sessions) is passed over for as long (markFull, moveNow): the session goes to
 * a less loaded one, and only when every server is full does the session wait out its own (CapacityWait).
 */

/** What one server did since the last reading (FleetCounts.take). */
export interface ServerCounts {
  url: string;
  /** Sessions opened on it. */
  sessions: number;
  /** Environment steps sent to it (replayed ones included). */
  steps: number;
  /** Connections to it that failed or dropped. */
  failures: number;
}

/** A request for a server that is down (see Fleet.acquire's `only`). */
export class ServerDown extends Error {
  override name = 'ServerDown';
}

interface Member {
  url: string;
  open: number;
  downUntil: number;
  /** Refused a session as full until then (not a failure: it answers). */
  fullUntil: number;
  counts: Omit<ServerCounts, 'url'>;
}

interface Waiter {
  only?: number;
  grant: (member: number) => void;
  reject: (e: unknown) => void;
  signal?: AbortSignal;
  onAbort?: () => void;
}

export class Fleet {
  private readonly members: Member[];
  private readonly waiting: Waiter[] = [];
  private timer?: NodeJS.Timeout;

  constructor(
    urls: readonly string[],
    readonly cap: number,
    private readonly downMs = 2_000,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.members = urls.map((url) => ({ url, open: 0, downUntil: 0, fullUntil: 0, counts: { sessions: 0, steps: 0, failures: 0 } }));
  }

  get size(): number {
    return this.members.length;
  }

  /** Sessions held now, all servers together. */
  get open(): number {
    return this.members.reduce((a, m) => a + m.open, 0);
  }

  isDown(member: number): boolean {
    return this.members[member]!.downUntil > this.now();
  }

  /**
   * A slot on a server (its index): the least-loaded one up with room, or `only` when given. Waits in
   * order for a slot; `only` fails with ServerDown while that server is down.
   */
  acquire(signal?: AbortSignal, only?: number): Promise<number> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (only !== undefined && this.isDown(only)) return Promise.reject(new ServerDown(`${this.members[only]!.url} is down`));
    return new Promise((resolve, reject) => {
      const waiter: Waiter = { grant: resolve, reject, signal, ...(only !== undefined ? { only } : {}) };
      if (signal) {
        waiter.onAbort = () => {
          const i = this.waiting.indexOf(waiter);
          if (i >= 0) this.waiting.splice(i, 1);
          reject(signal.reason);
        };
        signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      this.waiting.push(waiter);
      this.pump();
    });
  }

  release(member: number): void {
    this.members[member]!.open--;
    this.pump();
  }

  /** The server could not be reached: no new session goes there for a while; waiters for it alone are failed. */
  markDown(member: number): void {
    const m = this.members[member]!;
    m.counts.failures++;
    m.downUntil = this.now() + this.downMs;
    for (const w of [...this.waiting])
      if (w.only === member) {
        this.waiting.splice(this.waiting.indexOf(w), 1);
        this.settle(w);
        w.reject(new ServerDown(`${m.url} is down`));
      }
    this.pump();
  }

  /** A session on the server answered: it is up (again), and had room. */
  markUp(member: number): void {
    this.members[member]!.downUntil = 0;
    this.members[member]!.fullUntil = 0;
  }

  /** The server refused a session as full: new sessions go elsewhere for a while (it is tried again after). */
  markFull(member: number): void {
    this.members[member]!.fullUntil = this.now() + this.downMs;
  }

  /**
   * Moves a slot held on `member` to the least-loaded server with room now (up, not known full), at
   * once; undefined (the slot stays) when there is none other.
   */
  moveNow(member: number): number | undefined {
    const next = this.leastLoaded();
    if (next === undefined || next === member) return undefined;
    this.members[member]!.open--;
    this.members[next]!.open++;
    this.pump();
    return next;
  }

  countSession(member: number): void {
    this.members[member]!.counts.sessions++;
  }

  countStep(member: number): void {
    this.members[member]!.counts.steps++;
  }

  /** A dropped connection that did not (yet) take the server down. */
  countFailure(member: number): void {
    this.members[member]!.counts.failures++;
  }

  url(member: number): string {
    return this.members[member]!.url;
  }

  /** Each server's counts since the last call, and resets them (one step's). */
  take(): ServerCounts[] {
    return this.members.map((m) => {
      const out = { url: m.url, ...m.counts };
      m.counts = { sessions: 0, steps: 0, failures: 0 };
      return out;
    });
  }

  /** Grants slots to waiters in order while a server has room; a wait on down servers only resumes when the first comes back. */
  private pump(): void {
    for (let i = 0; i < this.waiting.length;) {
      const w = this.waiting[i]!;
      const member = w.only !== undefined ? (this.hasRoom(w.only) ? w.only : undefined) : this.leastLoaded();
      if (member === undefined) {
        i++;
        continue;
      }
      this.waiting.splice(i, 1);
      this.members[member]!.open++;
      this.settle(w);
      w.grant(member);
    }
    this.wakeWhenUp();
  }

  private hasRoom(member: number): boolean {
    const m = this.members[member]!;
    return m.open < this.cap && !this.isDown(member) && m.fullUntil <= this.now();
  }

  private leastLoaded(): number | undefined {
    let best: number | undefined;
    for (let i = 0; i < this.members.length; i++) if (this.hasRoom(i) && (best === undefined || this.members[i]!.open < this.members[best]!.open)) best = i;
    return best;
  }

  private settle(w: Waiter): void {
    if (w.onAbort) w.signal?.removeEventListener('abort', w.onAbort);
  }

  /** Waiters held up only by down (or full) servers are served when the first of them is due back (its probe). */
  private wakeWhenUp(): void {
    if (this.timer || this.waiting.length === 0) return;
    const now = this.now();
    const due = this.members.filter((m) => (m.downUntil > now || m.fullUntil > now) && m.open < this.cap).map((m) => Math.max(m.downUntil, m.fullUntil));
    if (due.length === 0) return;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.pump();
      },
      Math.max(1, Math.min(...due) - now),
    );
  }
}
