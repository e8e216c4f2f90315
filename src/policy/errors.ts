import type { PolicyFailureCode } from './types.ts';

/**
 * A policy call that failed in a way the engine treats as data: it is retried with backoff, then
 * recorded on the node (`Turn.error`). Anything else a policy throws is a bug and propagates.
 */
export class PolicyCallError extends Error {
  override name = 'PolicyCallError';
  constructor(
    readonly code: PolicyFailureCode,
    message: string,
    /** False when retrying cannot help (e.g. HTTP 400: the request itself is wrong). */
    readonly retryable = true,
  ) {
    super(message);
  }
}
