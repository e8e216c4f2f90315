/**
 * The base of every error a user can fix (bad input, a bad flag, a run folder in the wrong state):
 * the CLI prints its message as one stderr line and exits with code 2. Kept in a module of its own,
 * with no imports, so the CLI's error handling loads nothing heavy.
 */
export class UserError extends Error {}
