/**
 * How a model's turn becomes the text a server environment receives (`env.action.text`):
 *  - `turn`: the raw turn, whole (the server parses it; AgentGym's own clients send this). The turn is
 *    recorded as the action `{type: 'turn', input: <text>}`.
 *  - `action`: the Search-R1 parse of the turn, written back as one tag, `<search>query</search>` or
 *    `<answer>text</answer>` (thinking dropped; an unusable turn as `<invalid>rule: message</invalid>`).
 *  - `input`: the parsed action's text only (`<answer>click[Buy]</answer>` sends `click[Buy]`).
 * A policy that picks actions itself (the embedded one, from the server's candidates) sends, in `turn`
 * and `action`, the same one-tag form; an action of type `act` (a text the server listed) is always
 * sent as it is. Pure functions (the conformance test drives them).
 */
import type { Action } from '../../tree/types.ts';
import { parseTurn } from '../search/search-r1.ts';

export type ActionTextMode = 'turn' | 'action' | 'input';

/** The type of an action that is a server's own action text (a listed candidate): sent verbatim. */
export const LISTED_ACTION = 'act';
/** The type of an action that is a whole model turn (mode `turn`). */
export const WHOLE_TURN = 'turn';

/** A turn's thought and recorded action under `mode`. */
export function parseRemoteTurn(text: string, mode: ActionTextMode): { thought: string; action: Action } {
  const p = parseTurn(text);
  if (mode === 'turn') return { thought: p.thought, action: { type: WHOLE_TURN, input: text } };
  return { thought: p.thought, action: p.action };
}

/** The text sent to the server for an action (recorded or just chosen) under `mode`. */
export function actionText(action: Action, mode: ActionTextMode): string {
  if (action.type === LISTED_ACTION || action.type === WHOLE_TURN) return action.input;
  if (mode === 'input') return action.input;
  return `<${action.type}>${action.input}</${action.type}>`;
}

/**
 * The action a one-tag text stands for, exactly (`<type>input</type>` → {type, input}), or undefined
 * when the text is not one tag: how a server written for this protocol (`trace-rl env serve`) reads
 * `action` texts back without losing an invalid action's rule or an answer's spaces.
 */
export function oneTagAction(text: string): Action | undefined {
  const m = /^<([a-z_][\w-]*)>([\s\S]*)<\/\1>$/.exec(text);
  return m ? { type: m[1]!, input: m[2]! } : undefined;
}
