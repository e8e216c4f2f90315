/** How many llama.cpp sequences a tiny-LM policy batches: light, so the policy kind's entry can say it without loading llama.cpp. */

/**
 * Most sequences a policy batches: the largest parallelism the generation bench measured (tiny LM
 * generation: 1.1–1.5× the tokens per CPU-second of one sequence there); each sequence holds
 * a full-context F32 KV cache.
 */
export const MAX_SEQUENCES = 16;

/** Sequences for a caller that keeps at most `concurrency` policy calls in flight. */
export function sequencesFor(concurrency: number): number {
  return Math.max(1, Math.min(MAX_SEQUENCES, Math.floor(concurrency)));
}
