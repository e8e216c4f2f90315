/**
 * The longest delay Node's timers take as given (2^31 − 1 ms, about 25 days): a longer one fires after
 * 1 ms, with a TimeoutOverflowWarning. A module of its own below rollout/ so the call guard's clamp and
 * the settings' bound on a backoff delay read one constant without importing each other.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;
