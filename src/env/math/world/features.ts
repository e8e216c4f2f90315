import type { Action, Prompt, Turn } from '../../../tree/types.ts';
import { STOP_WORDS, words } from '../../../util/words.ts';

/**
 * The math world's own features of a code cell `print(v op n)` for the embedded policy (its kind's
 * ActionFeatures): the operation, the operand's position among the question's numbers crossed with
 * the number of cells run so far, and the operation crossed with each word of the sentence that
 * states the operand ("gives", "times", "shares") — what a linear model needs to pick the right
 * operation on the right number in order. Answers and searches get none.
 */
export function mathCellFeatures(prompt: Prompt, turns: readonly Turn[], action: Action): string[] {
  const t = action.type;
  if (t === 'search' || t === 'answer') return [];
  const m = /(\/\/|[-+*])\s*(-?\d+)\)\s*$/.exec(action.input);
  if (!m) return [];
  const [, op, operand] = m;
  const searches = new Set(turns.filter((x) => x.action.type === 'search').map((x) => x.action.input)).size;
  const cells = turns.length - searches;
  const question = prompt.question;
  const sentences = question.split(/(?<=[.?!])\s+/);
  const numbers: string[] = question.match(/\d+/g) ?? [];
  const at = numbers.indexOf(operand!);
  const out = [`${t}|op=${op}`, `${t}|cells=${cells}|arg=${at}`, `${t}|cells=${cells}|arg=${at}|op=${op}`];
  const sentence = sentences.find((s) => new RegExp(`\\b${operand}\\b`).test(s) && !/ has \d/.test(s)) ?? '';
  for (const w of words(sentence)) if (!STOP_WORDS.has(w) && !/^[0-9]+$/.test(w)) out.push(`${t}|op=${op}|w=${w}`);
  return out;
}
