import type { Rng } from '../util/rng.ts';
import type { EngineSettings } from './settings.ts';

/**
 * Delay before attempt a + 1 (a ≥ 1 failed attempts so far): d = min(maxDelay, base · 2^(a−1)),
 * then jittered to d · (1 − jitter · u) with u drawn from the call's own seeded stream, so retries
 * spread out under load yet a run stays reproducible.
 */
export function backoffDelay(failedAttempts: number, retry: EngineSettings['retry'], rng: Rng): number {
  const d = Math.min(retry.maxDelayMs, retry.baseDelayMs * 2 ** (failedAttempts - 1));
  return d * (1 - retry.jitter * rng.next());
}
