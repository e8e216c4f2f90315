/**
 * The Search-R1 text protocol: a turn is reasoning, then `<search>query</search>` or
 * `<answer>text</answer>`; the environment answers with `<information>…</information>` holding the top-k
 * documents as `Doc i(Title: t) text` lines (Search-R1's own layout, where `t` is the first line of a
 * corpus entry's `contents`). Lenient where models are sloppy (tag case, whitespace, a missing closing
 * tag at the very end); strict where it matters: exactly one action per turn, and the rule broken is
 * named.
 */
import type { Action } from '../../tree/types.ts';

/** Which protocol rule an unusable turn broke. */
export type ProtocolRule = 'no_action' | 'multiple_actions' | 'unclosed_tag' | 'empty_query' | 'empty_answer' | 'unknown_tool';

export type ParsedTurn = { ok: true; thought: string; action: Action } | { ok: false; thought: string; action: Action; rule: ProtocolRule; message: string };

const ACTION_OPEN = /<\s*(search|answer)\s*>/gi;
const THINK = /<\s*think\s*>([\s\S]*?)(?:<\s*\/\s*think\s*>|$)/i;
/** The closing tag of each action (compiled once, not per turn). */
const ACTION_CLOSE = { search: /<\s*\/\s*search\s*>/i, answer: /<\s*\/\s*answer\s*>/i };
/** Tags that are part of the protocol but are not actions. */
const NON_ACTION_TAGS = new Set(['think', 'information']);

/** The action `input` of an invalid turn: `<rule>: <message>` (see {@link invalidRule}). */
function invalid(thought: string, rule: ProtocolRule, message: string): ParsedTurn {
  return { ok: false, thought, action: { type: 'invalid', input: `${rule}: ${message}` }, rule, message };
}

/** The rule named by an invalid action's input, when it was produced by {@link parseTurn}. */
export function invalidRule(action: Action): string {
  const m = /^([a-z_]+):/.exec(action.input);
  return m ? m[1]! : 'invalid_action';
}

/** Parses one model turn; never throws. */
export function parseTurn(text: string): ParsedTurn {
  // The first action tag and how many there are, by exec on the one global pattern (matchAll clones
  // the pattern and builds an iterator and an array, on every turn of every trajectory).
  ACTION_OPEN.lastIndex = 0;
  const first = ACTION_OPEN.exec(text);
  let count = 0;
  if (first) for (count = 1; ACTION_OPEN.exec(text);) count++; // a failed exec sets lastIndex back to 0
  const thinkMatch = THINK.exec(text);
  const before = first ? text.slice(0, first.index) : text;
  const thought = (thinkMatch ? thinkMatch[1]! : before.replace(/<\s*\/?\s*think\s*>/gi, '')).trim();
  if (!first) {
    const other = [...text.matchAll(/<\s*([a-z_][\w-]*)\s*>/gi)].map((m) => m[1]!.toLowerCase()).find((t) => !NON_ACTION_TAGS.has(t));
    if (other) return invalid(thought, 'unknown_tool', `<${other}> is not a tool; use <search>query</search> or <answer>text</answer>`);
    return invalid(thought, 'no_action', 'no <search> or <answer> tag; end the turn with <search>query</search> or <answer>text</answer>');
  }
  if (count > 1) {
    return invalid(thought, 'multiple_actions', `${count} action tags in one turn; write exactly one <search> or <answer> per turn`);
  }
  const type = first[1]!.toLowerCase() as 'search' | 'answer';
  const rest = text.slice(first.index + first[0].length);
  const close = ACTION_CLOSE[type].exec(rest);
  let input: string;
  if (close) input = rest.slice(0, close.index);
  else {
    // A missing closing tag is tolerated only at the end of the text (generation stopped there).
    if (/<\s*\/?\s*[a-z_]+\s*>/i.test(rest)) {
      return invalid(thought, 'unclosed_tag', `<${type}> is not closed before the next tag; write <${type}>…</${type}>`);
    }
    input = rest;
  }
  input = input.trim();
  if (input.length === 0) {
    return type === 'search'
      ? invalid(thought, 'empty_query', 'the search query is empty; put the query between <search> and </search>')
      : invalid(thought, 'empty_answer', 'the answer is empty; put the answer between <answer> and </answer>');
  }
  return { ok: true, thought, action: { type, input } };
}

/** A retrieved passage. `title` is shown in the information block; `text` follows it. */
export interface Passage {
  id: string;
  title: string;
  text: string;
  score?: number;
}

/** Search-R1's corpus convention: `contents` = `"Title"\nText`. */
export function toContents(p: Pick<Passage, 'title' | 'text'>): string {
  return `"${p.title}"\n${p.text}`;
}

/** Splits Search-R1 `contents` back into title (quotes removed) and text. */
export function fromContents(contents: string): { title: string; text: string } {
  const nl = contents.indexOf('\n');
  const head = nl < 0 ? contents : contents.slice(0, nl);
  const text = nl < 0 ? '' : contents.slice(nl + 1);
  const title = head.length >= 2 && head.startsWith('"') && head.endsWith('"') ? head.slice(1, -1) : head;
  return { title, text };
}

/**
 * The observation for a search, as Search-R1 writes it: `Doc i(Title: <first line of contents>) <rest>`
 * per document, wrapped in `<information>` with blank lines around.
 */
export function formatInformation(passages: readonly Pick<Passage, 'title' | 'text'>[]): string {
  const body = passages
    .map((p, i) => `Doc ${i + 1}(Title: "${p.title}") ${p.text}`)
    .join('\n')
    .trim();
  const shown =
    body.length <= INFORMATION_CHARS
      ? body
      : `${body.slice(0, INFORMATION_CHARS)}… [information cut: ${body.length} characters, at most ${INFORMATION_CHARS} are shown]`;
  return `\n\n<information>${shown}</information>\n\n`;
}

/**
 * The most characters of passages one search shows the model. A retriever (a server, a user's corpus)
 * may answer passages of any length, and an observation rides in every later prompt of its trajectory;
 * Search-R1's passages are about 100 words (≈ 600 characters), so its top 3 are far below this.
 */
export const INFORMATION_CHARS = 16384;

/** Titles of the documents listed in an information block, in order. */
export function titlesIn(observation: string): string[] {
  return [...observation.matchAll(/Doc \d+\(Title: "([^\n]*?)"\) /g)].map((m) => m[1]!);
}

/** The question alone, for models trained without instructions (the tiny LM). */
export function renderQuestion(question: string): string {
  return `Question: ${question}\n`;
}

/** The instructions + question a Search-R1 agent starts from (our wording of its prompt). */
export function renderSearchR1(question: string, options: { maxTurns: number; topK: number }): string {
  return (
    'Answer the question below. Reason step by step inside <think> and </think> whenever you get new information. ' +
    `To look something up, write <search>query</search>; the top ${options.topK} documents come back between <information> and </information>. ` +
    `Search as often as you need (at most ${options.maxTurns} turns in all). ` +
    'When you know the answer, write it between <answer> and </answer> with no explanation, for example <answer>Paris</answer>. ' +
    `Question: ${question}\n`
  );
}
