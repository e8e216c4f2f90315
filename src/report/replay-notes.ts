/**
 * What restoring prefixes did in runs on a server environment (env.kind openenv, agentgym), as notes
 * for the report page: the method (fork where the servers kept the state, else replay) and its cost
 * over the run, each server's load where a fleet served it, and the continuations skipped because a
 * prefix replayed differently, by prompt (the environment is not replay-deterministic there).
 */
import { readStepDetails } from '../record/step-details.ts';
import type { RunData } from './load-runs.ts';

/** Most prompts named in one note (the rest are counted). */
const NAMED_PROMPTS = 8;

/** The run's restore methods and each server's load, summed over its steps (undefined for runs stored before they were). */
function serverLoad(run: RunData) {
  let out:
    | {
        restoreMethod: string;
        forks: number;
        forkFallbacks: number;
        failovers: number;
        byServer: Map<string, { sessions: number; steps: number; failures: number }>;
      }
    | undefined;
  for (const s of run.steps) {
    const d = readStepDetails(s.details).servers;
    if (!d) continue;
    out ??= { restoreMethod: d.restoreMethod, forks: 0, forkFallbacks: 0, failovers: 0, byServer: new Map() };
    out.forks += d.forks;
    out.forkFallbacks += d.forkFallbacks;
    out.failovers += d.failovers;
    for (const b of d.byServer) {
      const c = out.byServer.get(b.url) ?? { sessions: 0, steps: 0, failures: 0 };
      out.byServer.set(b.url, { sessions: c.sessions + b.sessions, steps: c.steps + b.steps, failures: c.failures + b.failures });
    }
  }
  return out;
}

export function replayNotes(runs: readonly RunData[]): string[] {
  const notes: string[] = [];
  for (const run of runs) {
    let restores = 0;
    let steps = 0;
    let ms = 0;
    let first: string | undefined;
    const byPrompt = new Map<string, number>();
    let seen = false;
    for (const s of run.steps) {
      const r = readStepDetails(s.details).replay;
      if (!r) continue;
      seen = true;
      restores += r.restores;
      steps += r.steps;
      ms += r.ms;
      first ??= r.first;
      for (const [id, n] of Object.entries(r.mismatches)) byPrompt.set(id, (byPrompt.get(id) ?? 0) + n);
    }
    if (!seen) continue;
    const load = serverLoad(run);
    const method =
      load && load.forks + load.forkFallbacks > 0
        ? `by fork where the server kept the state (${load.forks} forks; ${load.forkFallbacks} refused or differing, replayed), else by replay`
        : load?.restoreMethod === 'fork'
          ? 'by replay (the servers offer fork; no kept state was used)'
          : 'by replay';
    notes.push(`${run.dir}: prefixes restored ${method}: ${restores} restores, ${steps} environment steps, ${(ms / 1000).toFixed(1)} s (outside the budget)`);
    if (load && (load.byServer.size > 1 || load.failovers > 0))
      notes.push(
        `${run.dir}: server load: ${[...load.byServer]
          .map(([url, c]) => `${url} ${c.sessions} sessions, ${c.steps} steps, ${c.failures} failures`)
          .join('; ')}${load.failovers > 0 ? `; ${load.failovers} ${load.failovers === 1 ? 'trajectory' : 'trajectories'} failed over to another server` : ''}`,
      );
    if (byPrompt.size === 0) continue;
    const total = [...byPrompt.values()].reduce((a, b) => a + b, 0);
    const named = [...byPrompt].sort((a, b) => b[1] - a[1]).slice(0, NAMED_PROMPTS);
    const rest = byPrompt.size - named.length;
    notes.push(
      `${run.dir}: ${total} continuations not run (not trained on) because their prefix replayed differently: ${named.map(([id, n]) => `${id} ×${n}`).join(', ')}${
        rest > 0 ? ` and ${rest} more prompts` : ''
      }${first ? `; first: ${first}` : ''}`,
    );
  }
  return notes;
}
