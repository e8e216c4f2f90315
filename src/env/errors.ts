/** Misuse of an environment by calling code (not an agent's invalid action, which is an observation). */
export class EnvError extends Error {
  override name = 'EnvError';
}
