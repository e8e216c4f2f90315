/**
 * The answer a fault server gives when it has no upstream model: a small deterministic Search-R1
 * agent, enough to drive real multi-turn episodes through the engine. First turn: search the first
 * capitalised name in the question. Later turns: answer the first year, else the first quoted title,
 * in the latest <information> block.
 */
export function scriptedReply(conversation: string): string {
  // Only the dialogue after the question counts: instructions may quote the tags themselves.
  const at = conversation.lastIndexOf('Question:');
  const dialogue = at >= 0 ? conversation.slice(at) : conversation;
  const blocks = dialogue.split('<information>');
  if (blocks.length === 1) {
    const question = /Question:\s*([^\n]*)/.exec(dialogue)?.[1] ?? dialogue;
    const name = /[A-Z][a-z]+(?: [A-Z][a-z]+)*/.exec(question.replace(/^\s*\w+/, ''))?.[0] ?? question.slice(0, 40);
    return `<think>Look up ${name}.</think>\n<search>${name}</search>`;
  }
  const last = blocks.at(-1)!.split('</information>')[0]!;
  const answer = /\b(1[0-9]{3}|20[0-9]{2})\b/.exec(last)?.[1] ?? /Title: "([^"]*)"/.exec(last)?.[1] ?? 'unknown';
  return `<think>The passage says ${answer}.</think>\n<answer>${answer}</answer>`;
}

/** Texts a model might write when its tool call is broken; the n-th request gets one of them. */
export const BROKEN_TOOL_CALLS = [
  '<think>nested</think>\n<search>who <search>what</search>',
  '<think>mixed up</think>\n<search>who</answer>',
  '<search></search>',
  '<answer>',
  '<think>no action at all</think>',
  '<search>a</search><search>b</search>',
  '</search>stray close',
] as const;
