/**
 * Two readings of server load summed (ServerLoad, env/types.ts): a training step split across rollout
 * worker processes reads each worker's environment, whose sessions are its own, and this process's.
 * The servers are matched by address (every worker serves the run's one fleet); the restore method is
 * the same in all of them.
 */
import type { ServerLoad } from './types.ts';

export function addServerLoad(a: ServerLoad | undefined, b: ServerLoad | undefined): ServerLoad | undefined {
  if (!a || !b) return a ?? b;
  const servers = a.servers.map((s) => ({ ...s }));
  for (const s of b.servers) {
    const same = servers.find((x) => x.url === s.url);
    if (!same) servers.push({ ...s });
    else {
      same.sessions += s.sessions;
      same.steps += s.steps;
      same.failures += s.failures;
    }
  }
  return {
    restoreMethod: a.restoreMethod,
    resets: a.resets + b.resets,
    steps: a.steps + b.steps,
    replayedSteps: a.replayedSteps + b.replayedSteps,
    forks: a.forks + b.forks,
    forkFallbacks: a.forkFallbacks + b.forkFallbacks,
    failovers: a.failovers + b.failovers,
    ms: a.ms + b.ms,
    servers,
  };
}
