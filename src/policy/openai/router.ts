/**
 * Least-loaded routing over several inference servers, sticky per trajectory: a trajectory keeps its
 * server (so the server's prefix cache holds its history) unless that server has `slack` more
 * requests in flight than the least-loaded one. Ties go to the lowest index, so routing is
 * deterministic for a given order of calls.
 */
export class Router {
  private readonly load: number[];
  private readonly sticky = new Map<string, number>();

  constructor(
    readonly urls: readonly string[],
    private readonly options: { slack?: number; maxSticky?: number } = {},
  ) {
    if (urls.length === 0) throw new RangeError('Router needs at least one base URL');
    this.load = urls.map(() => 0);
  }

  /** In-flight requests per server. */
  inFlight(): number[] {
    return [...this.load];
  }

  /** Picks a server for one request and counts it in flight; call the returned `done` when it ends. */
  acquire(trajectoryId?: string): { index: number; url: string; done: () => void } {
    const min = Math.min(...this.load);
    let index = this.load.indexOf(min);
    const prev = trajectoryId !== undefined ? this.sticky.get(trajectoryId) : undefined;
    if (prev !== undefined && this.load[prev]! <= min + (this.options.slack ?? 1)) index = prev;
    if (trajectoryId !== undefined) {
      this.sticky.delete(trajectoryId);
      this.sticky.set(trajectoryId, index);
      // Bounded memory: forget the oldest trajectories first.
      const cap = this.options.maxSticky ?? 100_000;
      if (this.sticky.size > cap) this.sticky.delete(this.sticky.keys().next().value!);
    }
    this.load[index]! += 1;
    let open = true;
    return {
      index,
      url: this.urls[index]!,
      done: () => {
        if (open) this.load[index]! -= 1;
        open = false;
      },
    };
  }
}
