import { z } from 'zod';
import { MAX_TIMER_MS } from '../util/timer.ts';

/**
 * Engine settings, validated once with defaults. Each field's description is the single place it is
 * documented (docs/rollout.md refers here).
 */
export const engineSettingsSchema = z.object({
  concurrency: z.number().int().min(1).default(8).describe('Policy requests in flight at once (a semaphore shared by every trajectory of the step).'),
  maxTurns: z
    .number()
    .int()
    .min(1)
    .default(6)
    .describe('Turn limit T counted from the root; a trajectory that reaches it ends with reason turn_limit and reward 0.'),
  maxTokensPerTurn: z
    .number()
    .int()
    .min(1)
    .default(512)
    .describe('Upper bound on generated tokens per policy call; reserved in the budget ledger before the call.'),
  timeoutMs: z
    .number()
    .positive()
    .default(60_000)
    .describe('A policy call that has not answered after this long fails with code timeout; a tool call, with code tool_error.'),
  retry: z
    .object({
      // 5 attempts from 400 ms: 3–6 s of backoff in all before the last one, so a server restart or a
      // failover of a few seconds is ridden out, while a server that is really down fails the call
      // within seconds (3 attempts from 200 ms gave up after 0.3–0.6 s: a 1.5 s outage failed a step).
      maxAttempts: z.number().int().min(1).default(5).describe('Attempts per policy call or tool step (1 = no retry).'),
      baseDelayMs: z.number().min(0).default(400).describe('Backoff before attempt a+1 is baseDelayMs · 2^(a−1), capped, then jittered.'),
      maxDelayMs: z
        .number()
        .min(0)
        .max(MAX_TIMER_MS, `at most ${MAX_TIMER_MS} ms (Node’s longest timer; a longer one fires after 1 ms)`)
        .default(5_000)
        .describe('Cap on one backoff delay.'),
      jitter: z.number().min(0).max(1).default(0.5).describe('Fraction of the delay drawn uniformly at random: delay · (1 − jitter · u), u ~ U[0,1).'),
    })
    .prefault({})
    .describe(
      'Retries of transient failures (timeout, server_error, parse_error from the server, tool errors). After the last attempt fails the trajectory is dropped: it ends with end = error and no reward.',
    ),
  workers: z
    .number()
    .int()
    .min(1)
    .max(64)
    .default(1)
    .describe(
      "Worker processes a training step's rollouts are split across by prompt (1 = all in this process). With N > 1 this process plans the roots, each worker runs the bare rollouts and prefix expansion of its share of the prompts (concurrency is divided among them), and this process merges the trees and runs the leftover top-up. In trajectories the trees are the same as in process; in turns or tokens each worker admits against its share of the budget, so B holds but the trees differ. One root round and per-prompt expansion only (not dapo, not trace's prefixBudget: shared); eval and the rollout service run in process (docs/rollout.md, Worker processes).",
    ),
});

export type EngineSettings = z.output<typeof engineSettingsSchema>;
export type EngineSettingsInput = z.input<typeof engineSettingsSchema>;

export function engineSettings(input: EngineSettingsInput = {}): EngineSettings {
  return engineSettingsSchema.parse(input);
}
