/**
 * What a Tinker engine's prefix cache did for a run's samples, as a note for the report page: the
 * run's sums of the prompt tokens sent, those in the trees' shared prefixes (what an ideal cache keeps)
 * and those the engine says it took from its cache. Runs of other policies log none and get no note.
 */
import { promptCacheLine } from '../record/prompt-cache.ts';
import type { RunData } from './load-runs.ts';

const KEYS = ['tinker_prompt_tokens', 'tinker_prompt_shared_tokens', 'tinker_prompt_cache_hit_tokens'] as const;

export function promptCacheNotes(runs: readonly RunData[]): string[] {
  return runs.flatMap((run) => {
    if (!run.steps.some((s) => s.metrics.tinker_prompt_tokens !== undefined)) return [];
    const sums: Record<string, number> = {};
    for (const key of KEYS) if (run.steps.some((s) => s.metrics[key] !== undefined)) sums[key] = run.steps.reduce((n, s) => n + (s.metrics[key] ?? 0), 0);
    return [`${run.dir}: ${promptCacheLine(sums)}`];
  });
}
