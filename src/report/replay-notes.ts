/**
 * What restoring prefixes by replay did in runs on a server environment (env.kind openenv, agentgym),
 * as notes for the report page: the replay's cost over the run, and the continuations skipped because
 * a prefix replayed differently, by prompt (the environment is not replay-deterministic there).
 */
import { readStepDetails } from '../record/step-details.ts';
import type { RunData } from './load-runs.ts';

/** Most prompts named in one note (the rest are counted). */
const NAMED_PROMPTS = 8;

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
    notes.push(`${run.dir}: prefixes restored by replay: ${restores} restores, ${steps} environment steps, ${(ms / 1000).toFixed(1)} s (outside the budget)`);
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
