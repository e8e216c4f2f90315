/**
 * The text the tiny LM reads and writes in the embedded world: its prompt (the question only — the
 * Search-R1 instructions would cost ~100 tokens per sequence and a model this small learns the format
 * from demonstrations instead), the observation blocks, and the corpus its vocabulary is learned from.
 */
import { formatInformation, renderQuestion } from '../env/search/search-r1.ts';
import type { WorldEnv } from '../env/world/world-env.ts';
import { buildVocabulary, type Vocabulary, type VocabularyOptions } from './vocabulary.ts';
import type { Prompt } from '../tree/types.ts';

/** The prompt text the tiny LM is conditioned on (after BOS). */
export function tinyPrompt(prompt: Prompt): string {
  return renderQuestion(prompt.question);
}

/** A turn's text as the demonstrations write it (the same shape as the embedded policy's turns). */
export function turnText(action: { type: 'search' | 'answer'; input: string }): string {
  const thought = action.type === 'search' ? `I need to look up ${action.input}.` : `The answer is ${action.input}.`;
  return `<think>${thought}</think>\n<${action.type}>${action.input}</${action.type}>`;
}

/** Every passage as an observation, every question as a prompt, every answer and name as a turn. */
export function worldCorpus(env: WorldEnv): string[] {
  const out: string[] = [];
  for (const p of env.world.passages) out.push(formatInformation([p]));
  for (const q of [...env.train, ...env.test]) {
    out.push(tinyPrompt(q));
    for (const a of q.answers) out.push(turnText({ type: 'answer', input: a }));
  }
  for (const e of env.world.entities) out.push(turnText({ type: 'search', input: e.name }));
  out.push(formatInformation([]), 'yes no unknown');
  return out;
}

export function worldVocabulary(env: WorldEnv, options: VocabularyOptions = {}): Vocabulary {
  return buildVocabulary(worldCorpus(env), options);
}
