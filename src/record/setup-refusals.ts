/**
 * The tasks a run skipped when it was set up, kept with the run as a note (RunStore.note) for its
 * writer (train/loop.ts) and the report: those the environment's server refused at their first
 * observation, and those whose first prompt does not fit the policy's context (train/prompt-fit.ts).
 * A run-level count, not a step metric: it is settled once, before the first step.
 */
import { z } from 'zod';

/** The note's key. */
export const SETUP_REFUSALS_NOTE = 'setup_refusals';

export const setupRefusalsSchema = z.object({
  /** Training and held-out tasks the run was configured with. */
  tasks: z.number().int().nonnegative(),
  /** Refused by the server at setup (an error at reset, an answer of the wrong shape). */
  server: z.number().int().nonnegative(),
  /** Their first prompt and a first turn do not fit the policy's context. */
  context: z.number().int().nonnegative(),
  /** The first few context refusals: the task, its prompt's tokens and the context. */
  named: z.array(z.object({ id: z.string(), tokens: z.number(), context: z.number() })).max(16),
});

export type SetupRefusals = z.output<typeof setupRefusalsSchema>;

/** The note as stored, or undefined for a run without one (or one that does not parse). */
export function readSetupRefusals(note: unknown): SetupRefusals | undefined {
  const r = setupRefusalsSchema.safeParse(note);
  return r.success ? r.data : undefined;
}
