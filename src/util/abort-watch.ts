/**
 * Watching an AbortSignal without a listener per watcher. An EventTarget listener costs several µs to
 * add and remove in Node (bench/scale profiles: about 5 µs a call for the policy client's one), and a
 * signal outlives many calls (a trajectory's calls share one; a step's share the run's). So each signal
 * carries one listener, added the first time it is watched, that tells the watchers registered at that
 * moment; watching and unwatching are a Set's add and delete. Callers check `signal.aborted` before
 * watching: a signal that has already aborted fires no more.
 */
export interface AbortWatcher {
  onSignalAbort(): void;
}

const watchers = new WeakMap<AbortSignal, Set<AbortWatcher>>();

export function watchAbort(signal: AbortSignal, watcher: AbortWatcher): void {
  let set = watchers.get(signal);
  if (!set) {
    const all = (set = new Set());
    watchers.set(signal, all);
    signal.addEventListener(
      'abort',
      () => {
        const now = [...all];
        all.clear();
        for (const w of now) w.onSignalAbort();
      },
      { once: true },
    );
  }
  set.add(watcher);
}

export function unwatchAbort(signal: AbortSignal, watcher: AbortWatcher): void {
  watchers.get(signal)?.delete(watcher);
}
