/**
 * What restoring prefixes by replay did in a step (environments served over the wire, env/remote): its
 * own module, below step-options.ts and remote-round.ts, which both carry these counts.
 */

/** Continuations skipped because their prefix's replay differed from the record, by prompt id, with the first message. */
export interface ReplayMismatches {
  byPrompt: Record<string, number>;
  first?: string;
}

/** See StepResult.replayCost. */
export interface ReplayCost {
  restores: number;
  steps: number;
  ms: number;
}

/** Adds `more` into `into` (a worker's share into the step's). */
export function addReplayCost(into: ReplayCost, more: ReplayCost): void {
  into.restores += more.restores;
  into.steps += more.steps;
  into.ms += more.ms;
}

/** Adds `more`'s per-prompt counts into `into`, keeping the first message seen. */
export function addReplayMismatches(into: ReplayMismatches, more: ReplayMismatches): void {
  for (const [id, n] of Object.entries(more.byPrompt)) into.byPrompt[id] = (into.byPrompt[id] ?? 0) + n;
  if (more.first !== undefined) into.first ??= more.first;
}
