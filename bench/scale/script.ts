/**
 * What both sides of the scale bench share: the questions, the rendered prompt, the observation an
 * environment answers a search with, and the scripted model's reply. The trace-rl side and the bare
 * loop build the same conversations from these, so the server sees the same requests from both.
 */
import type { Environment, StepOutcome } from '../../src/env/types.ts';
import { scriptedReply } from '../../src/faults/scripted-reply.ts';
import type { Action, Prompt, Turn } from '../../src/tree/types.ts';

/** Trajectories per prompt (G); the sweep sets prompts = trajectories / G. */
export const ROLLOUTS_PER_PROMPT = 8;
export const MAX_TURNS = 5;

const NAMES = ['Alder', 'Birch', 'Cedar', 'Dogwood', 'Elm', 'Fir', 'Ginkgo', 'Hazel', 'Juniper', 'Larch', 'Maple', 'Oak'];

export function scalePrompts(n: number): Prompt[] {
  return Array.from({ length: n }, (_, i) => {
    const name = `${NAMES[i % NAMES.length]} ${NAMES[(i * 7 + 3) % NAMES.length]} Company`;
    return { id: `q${i}`, question: `In which year was ${name} founded?`, answers: [String(1900 + (i % 120))] };
  });
}

/** A Search-R1 instruction of typical length, then the question. */
export function renderPrompt(p: Prompt): string {
  return (
    'Answer the given question. You must conduct reasoning inside <think> and </think> first every time you get new ' +
    'information. After reasoning, if you find you lack some knowledge, you can call a search engine by ' +
    '<search> query </search> and it will return the top searched results between <information> and ' +
    '</information>. You can search as many times as you want. If you find no further external knowledge ' +
    'needed, you can directly provide the answer inside <answer> and </answer>, without detailed illustrations. ' +
    `For example, <answer> Beijing </answer>. Question: ${p.question}\n`
  );
}

/** The year hidden in a query: the same function of the query text on both sides. */
function yearOf(query: string): number {
  let h = 0;
  for (let i = 0; i < query.length; i++) h = (h * 31 + query.charCodeAt(i)) >>> 0;
  return 1900 + (h % 120);
}

export function observationFor(query: string, searchNo: number): string {
  return (
    `\n\n<information>Doc 1 (Title: "${query}") ${query} was founded in ${yearOf(query) + searchNo} by a group of ` +
    `merchants. Doc 2 (Title: "${query} history") The firm grew through the century.</information>\n\n`
  );
}

/** Searches before the answer: 2–4 by question, so trajectories take 3–5 turns. */
function searchesFor(question: string): number {
  let h = 7;
  for (let i = 0; i < question.length; i++) h = (h * 33 + question.charCodeAt(i)) >>> 0;
  return 2 + (h % 3);
}

/**
 * The scripted model: search the question's name until this question's number of searches is done,
 * then answer with the year in the latest passage (the fault server's scripted agent for both moves).
 */
export function scaleReply(conversation: string): string {
  const at = conversation.lastIndexOf('Question:');
  const dialogue = at >= 0 ? conversation.slice(at) : conversation;
  const blocks = dialogue.split('<information>').length - 1;
  const question = /Question:\s*([^\n]*)/.exec(dialogue)?.[1] ?? '';
  return blocks < searchesFor(question) ? scriptedReply(dialogue.split('<information>')[0]!) : scriptedReply(dialogue);
}

/** A stateless search environment whose step costs next to nothing: the bench measures the client path. */
export class ScaleEnv implements Environment<{ prompt: Prompt; searches: number }> {
  readonly name = 'scale';
  readonly maxTurns = MAX_TURNS;
  reset(prompt: Prompt) {
    return { prompt, searches: 0 };
  }
  render(prompt: Prompt): string {
    return renderPrompt(prompt);
  }
  restore(prompt: Prompt, turns: readonly Turn[]) {
    return { prompt, searches: turns.filter((t) => t.action.type === 'search').length };
  }
  async step(state: { prompt: Prompt; searches: number }, action: Action): Promise<StepOutcome<{ prompt: Prompt; searches: number }>> {
    if (action.type === 'answer') {
      const reward = state.prompt.answers.includes(action.input.trim()) ? 1 : 0;
      return { state, observation: '', done: true, reward, score: reward, reason: 'answer' };
    }
    if (action.type !== 'search') return { state, observation: '\n\n<information>invalid</information>\n\n', done: false, invalid: true };
    const next = { prompt: state.prompt, searches: state.searches + 1 };
    return { state: next, observation: observationFor(action.input.trim(), state.searches), done: false };
  }
}
