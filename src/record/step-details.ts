/**
 * The `details` of a stored step, one schema for its writer (train/step.ts), its readers (the report's
 * charts) and the tests that make synthetic runs. The writer builds the type; readers parse each part
 * on its own, so a run stored before a part existed (or a synthetic one without it) still charts the
 * rest.
 */
import { z } from 'zod';

const counts = z.record(z.string(), z.number());

/** One reliability bin of the predictor's calibration (empty bins are not stored). */
const binSchema = z.object({ lo: z.number(), hi: z.number(), meanPredicted: z.number(), observed: z.number(), count: z.number().positive() });
export type StoredBin = z.output<typeof binSchema>;

/** Bins as stored; a reader keeps the well-formed ones. */
const bins = z.array(z.unknown()).transform((list) =>
  list.flatMap((b) => {
    const bin = binSchema.safeParse(b);
    return bin.success ? [bin.data] : [];
  }),
);

export const stepDetailsSchema = z.object({
  /** What the step spent (budget/ledger.ts Spend). */
  spend: z.object({ bare: z.number(), continuation: z.number(), turns: z.number(), tokens: z.number(), toolCalls: z.number() }),
  /** Rollout rounds the engine ran. */
  rounds: z.number(),
  /** Trajectory failures by code (timeouts, server errors, tool errors, budget). */
  failures: counts,
  allocation: z.object({
    /** Bare rollouts per prompt id. */
    roots: counts,
    /** Continuations started after turn t, by t. */
    continuationsByDepth: counts,
  }),
  reliability: z.object({ root: bins, prefix: bins }),
  /** The external trainer's policy (rollout runs only). */
  policy: z.string().optional(),
  /**
   * Server environments (env/remote) only: restoring prefixes by replay. Continuations skipped because
   * their prefix replayed differently, by prompt id (the first message kept), and what the replays cost.
   */
  replay: z
    .object({
      mismatches: counts,
      first: z.string().optional(),
      restores: z.number(),
      steps: z.number(),
      ms: z.number(),
    })
    .optional(),
  /**
   * Server environments (env/remote) only: how prefixes were restored (fork where the servers offer it,
   * else replay), the forks replayed instead, the trajectories failed over, and each server's load.
   */
  servers: z
    .object({
      restoreMethod: z.enum(['fork', 'replay']),
      forks: z.number(),
      forkFallbacks: z.number(),
      failovers: z.number(),
      byServer: z.array(z.object({ url: z.string(), sessions: z.number(), steps: z.number(), failures: z.number() })),
    })
    .optional(),
});

export type StepDetails = z.output<typeof stepDetailsSchema>;

/** The parts of stored details that are well-formed (each part checked on its own). */
export function readStepDetails(details: unknown): Partial<StepDetails> {
  const raw = typeof details === 'object' && details !== null ? (details as Record<string, unknown>) : {};
  const out: Record<string, unknown> = {};
  for (const [key, schema] of Object.entries(stepDetailsSchema.shape)) {
    const part = schema.safeParse(raw[key]);
    if (part.success && part.data !== undefined) out[key] = part.data;
  }
  return out as Partial<StepDetails>;
}
