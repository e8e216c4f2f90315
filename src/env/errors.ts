import { escapeControl } from '../util/escape-control.ts';
import type { RestoreCost } from './types.ts';

/** Misuse of an environment by calling code (not an agent's invalid action, which is an observation). */
export class EnvError extends Error {
  override name = 'EnvError';
}

/**
 * Replaying a prefix's recorded actions in a fresh session gave another observation, reward or end
 * than the one recorded: the environment is not replay-deterministic at this prefix. The continuation
 * that asked for the restore is not run (nothing of it is trained on); the engine counts it per prompt.
 */
export class ReplayMismatch extends Error {
  override name = 'ReplayMismatch';
  constructor(
    /** The prompt (task) whose prefix was replayed. */
    readonly promptId: string,
    /** Index of the replayed turn that differed (0 = the prefix's first turn). */
    readonly turn: number,
    /** What differed: 'observation', 'reward', 'done' (or 'prompt', when the reset's first observation did). */
    readonly field: string,
    readonly recorded: string,
    readonly replayed: string,
    /** What the replay cost until it differed (counted in the step's replay cost like any other restore). */
    readonly cost?: RestoreCost,
  ) {
    super(
      `replaying prompt "${promptId}" differed at turn ${turn} (${field}): recorded ${clip(recorded)}, replayed ${clip(replayed)}; ` +
        `the environment is not replay-deterministic (set env.branching: roots-only to train without continuations)`,
    );
  }
}

function clip(s: string): string {
  return escapeControl(JSON.stringify(s.length > 80 ? `${s.slice(0, 77)}...` : s));
}
