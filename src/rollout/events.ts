import type { EndReason, Origin, TurnError } from '../tree/types.ts';

/** Running totals of one step, carried by every event so a progress bar needs no state of its own. */
export interface Progress {
  /** Bare rollouts planned / finished (any end). */
  barePlanned: number;
  bareDone: number;
  /** Continuations planned / finished. */
  continuationPlanned: number;
  continuationDone: number;
  /** Turns added to trees so far. */
  turns: number;
  /** Trajectories that ended with end = error. */
  failed: number;
  /** Prompts whose prefix expansion has been planned. */
  promptsExpanded: number;
}

/** What the engine reports while it runs (phase and counts), for CLI progress and logs. */
export type EngineEvent =
  | { kind: 'roots'; round: number; prompts: number; trajectories: number; progress: Progress }
  | { kind: 'trajectory'; origin: Exclude<Origin, 'root'>; promptId: string; firstNodeId: string; end: EndReason | 'not_started'; progress: Progress }
  | { kind: 'expand'; promptId: string; prefixes: number; expanded: number; continuations: number; progress: Progress }
  | { kind: 'retry'; key: string; attempt: number; error: TurnError; delayMs: number; progress: Progress }
  /** A step split across worker processes: the step's counts with the workers' so far (their trajectories send no events of their own here). */
  | { kind: 'workers'; progress: Progress }
  | { kind: 'done'; cancelled: boolean; progress: Progress };

/** Adds `from`'s counts to `into` (a step's counts with those of parts run elsewhere). */
export function addProgress(into: Progress, from: Readonly<Progress>): Progress {
  for (const k of Object.keys(into) as Array<keyof Progress>) into[k] += from[k];
  return into;
}

export function emptyProgress(): Progress {
  return { barePlanned: 0, bareDone: 0, continuationPlanned: 0, continuationDone: 0, turns: 0, failed: 0, promptsExpanded: 0 };
}
