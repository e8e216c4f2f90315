import { DEFAULT_SCHEDULE } from '../../allocate/types.ts';
import { UserError } from '../../util/user-error.ts';
import type { Allocator, StepOptions } from '../step-options.ts';

/** A step that cannot be split across workers as configured; the message names the setting and the fix. */
export class SplitRefused extends UserError {
  override name = 'SplitRefused';
}

/** Why a strategy's steps cannot be split across workers by prompt (undefined: they can); the configuration checks it too. */
export function strategySplitRefusal(s: Allocator): string | undefined {
  if (s.roots.rounds === 'until-empty')
    return "a root planner with several rounds (dapo's dynamic sampling) plans each round from every prompt's results so far; use a strategy with one root round";
  if ((s.prefixes?.schedule ?? DEFAULT_SCHEDULE).kind === 'step')
    return "a prefix schedule of kind 'step' (trace's prefixBudget: shared) plans every prompt's prefixes at once; use prefixBudget: per-prompt";
  return undefined;
}

/** Why the step cannot be split as configured (undefined: it can). */
export function splitRefusal<S>(options: StepOptions<S>): string | undefined {
  if (options.remote) return 'the step already runs its round elsewhere (options.remote)';
  if (options.record || options.replay) return 'a recorded or replayed step keeps one tape of every call in order, in one process (record/replay)';
  if (options.caps && (options.caps.turns !== undefined || options.caps.tokens !== undefined))
    return 'caps on turns or tokens (caps) are admitted call by call over the whole step, which workers cannot share';
  return options.strategy ? strategySplitRefusal(options.strategy) : undefined;
}
