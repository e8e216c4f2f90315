/**
 * Tasks whose first prompt does not fit the policy's context, refused at setup (issue 67). Without
 * this, such a task opens a session and spends budget on every trajectory drawn for it, each ending at
 * its first call with `context_overflow` (reward 0, nothing to learn from). A policy that counts its
 * tokens (Policy.promptFit: the tiny LM, Tinker, the OpenAI-compatible policy where its servers say)
 * is asked once per task before any rollout (training's setup, eval's and diagnose's); the task
 * is kept when its prompt and one full first turn fit:
 *
 *   tokens + room ≤ context,   room = min(the policy's per-turn cap, engine.maxTokensPerTurn)
 *
 * A full turn, not one token: a prompt that leaves less would have its first turn cut short by the
 * context (the engines clamp the turn, so the answer or search tag it needs may never come). A policy
 * that cannot tell (the embedded one, a scripted one) is not asked, and nothing is refused.
 */
import type { Policy, PromptFit } from '../policy/types.ts';
import type { Prompt } from '../tree/types.ts';
import { escapeControl } from '../util/escape-control.ts';
import { UserError } from '../util/user-error.ts';

/** A task refused because its prompt and first turn do not fit. */
export interface TooLong {
  prompt: Prompt;
  fit: PromptFit;
  /** Tokens left for the first turn's generation. */
  room: number;
}

/** Every training task's prompt is too long for the policy's context: nothing is left to train on. */
export class PromptFitError extends UserError {
  override name = 'PromptFitError';
}

/** Prompts asked at once (a server tokenizer answers each over HTTP). */
const AT_ONCE = 8;
/** How many refused tasks stderr names one by one (the rest are counted). */
const NAMED = 3;

/** The prompts that fit, in their order, and those that do not; everything fits for a policy that cannot tell. */
export async function promptsThatFit(
  policy: Policy,
  prompts: readonly Prompt[],
  render: (p: Prompt) => string,
  engineTurnTokens: number,
): Promise<{ kept: Prompt[]; tooLong: TooLong[] }> {
  if (!policy.promptFit) return { kept: [...prompts], tooLong: [] };
  const fits: Array<PromptFit | undefined> = new Array(prompts.length);
  let next = 0;
  const worker = async () => {
    while (next < prompts.length) {
      const i = next++;
      fits[i] = await policy.promptFit!(prompts[i]!, render(prompts[i]!));
    }
  };
  await Promise.all(Array.from({ length: Math.min(AT_ONCE, prompts.length) }, worker));
  const kept: Prompt[] = [];
  const tooLong: TooLong[] = [];
  prompts.forEach((prompt, i) => {
    const fit = fits[i];
    const room = Math.min(fit?.turnTokens ?? engineTurnTokens, engineTurnTokens);
    if (!fit || fit.tokens + room <= fit.context) kept.push(prompt);
    else tooLong.push({ prompt, fit, room });
  });
  return { kept, tooLong };
}

/** One refused task in words: its id, its tokens, the first turn's room and the context. */
function named(t: TooLong): string {
  const n = (x: number) => x.toLocaleString('en-US');
  return `task "${t.prompt.id}" takes ${n(t.fit.tokens)} tokens + ${n(t.room)} for the first turn, more than the context of ${n(t.fit.context)}`;
}

/** How a command words its refusals: the setting that bounds a turn (train's engine.maxTokensPerTurn, eval's --max-tokens), and what it does with its tasks. */
export interface FitWording {
  turnSetting: string;
  /** "training tasks … none is left to train on". */
  tasks: string;
  purpose: string;
}

export const TRAIN_WORDING: FitWording = { turnSetting: 'engine.maxTokensPerTurn', tasks: 'training tasks', purpose: 'to train on' };

/** What to change; lowering the turn setting is offered only where it, not the policy's own cap, set the room. */
function fix(tooLong: readonly TooLong[], engineTurnTokens: number, turnSetting: string): string {
  const engineBound = tooLong.some((t) => t.room === engineTurnTokens && (t.fit.turnTokens ?? Infinity) > engineTurnTokens);
  return `use a model with a longer context${engineBound ? `, a lower ${turnSetting}` : ''}, or shorten the tasks' first observations`;
}

/** The one stderr line that counts and names the tasks skipped (training and held-out together). */
export function tooLongLine(
  tooLong: readonly TooLong[],
  of: number,
  where: string,
  policy: string,
  engineTurnTokens: number,
  wording: FitWording = TRAIN_WORDING,
): string {
  const list = tooLong.slice(0, NAMED).map(named).join('; ');
  const more = tooLong.length > NAMED ? `; and ${tooLong.length - NAMED} more` : '';
  return escapeControl(
    `${where}: ${tooLong.length} of ${of} tasks skipped at setup: the first observation does not fit policy ${policy}'s context: ${list}${more}; ${fix(tooLong, engineTurnTokens, wording.turnSetting)}`,
  );
}

/** The one-line failure when no task is left. */
export function noTaskFits(
  tooLong: readonly TooLong[],
  where: string,
  policy: string,
  engineTurnTokens: number,
  wording: FitWording = TRAIN_WORDING,
): PromptFitError {
  return new PromptFitError(
    escapeControl(
      `${where}: all ${tooLong.length} ${wording.tasks} are too long for policy ${policy}'s context of ${tooLong[0]!.fit.context.toLocaleString('en-US')} tokens, none is left ${wording.purpose}; the first: ${named(tooLong[0]!)}; ${fix(tooLong, engineTurnTokens, wording.turnSetting)}`,
    ),
  );
}
