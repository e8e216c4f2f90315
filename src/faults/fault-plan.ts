import { z } from 'zod';
import { createRng, type Rng } from '../util/rng.ts';

/**
 * What a faulty inference server can do to one request:
 *  - server_error: HTTP 500/502/503 with an OpenAI-style error body;
 *  - hang: no answer until the client gives up (its timeout) or `hangMs` passes;
 *  - close: the TCP connection is destroyed without a response;
 *  - malformed: HTTP 200 whose body is not JSON at all;
 *  - truncated: HTTP 200 whose JSON body is cut off mid-way;
 *  - broken_tool_call: a well-formed completion whose text is a broken tool call (unclosed or
 *    mismatched tags, empty query) — the model's fault, not the transport's.
 */
export const SERVER_FAULT_KINDS = ['server_error', 'hang', 'close', 'malformed', 'truncated', 'broken_tool_call'] as const;
export type ServerFaultKind = (typeof SERVER_FAULT_KINDS)[number];

export const faultPlanSchema = z
  .object({
    rate: z.number().min(0).max(1).default(0.2).describe('Fraction of requests that fail (each request independently).'),
    kinds: z
      .array(z.enum(SERVER_FAULT_KINDS))
      .min(1)
      .default([...SERVER_FAULT_KINDS])
      .describe('Fault kinds drawn uniformly when a request fails.'),
    seed: z.number().int().min(0).default(0).describe('Seed of the fault draws: request n fails the same way in every run with this seed.'),
  })
  .strict();
export type FaultPlan = z.output<typeof faultPlanSchema>;
export type FaultPlanInput = z.input<typeof faultPlanSchema>;

/**
 * Decides request n's fate from the seed and n alone (stream `request/n`), so the n-th request fails
 * the same way whatever the timing; which trajectory sends the n-th request still depends on timing.
 */
export function faultFor(plan: FaultPlan, n: number): ServerFaultKind | 'ok' {
  return drawFault(plan, createRng(plan.seed).fork(`request/${n}`));
}

export function drawFault<K extends string>(plan: { rate: number; kinds: readonly K[] }, rng: Rng): K | 'ok' {
  if (rng.next() >= plan.rate) return 'ok';
  return plan.kinds[rng.int(plan.kinds.length)]!;
}

/** Counts of what was injected, by kind (every key present, 0 when none). */
export function emptyCounts<K extends string>(kinds: readonly K[]): Record<K | 'ok', number> {
  return Object.fromEntries([...kinds, 'ok'].map((k) => [k, 0])) as Record<K | 'ok', number>;
}
