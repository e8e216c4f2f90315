/** Synthetic histories for predictor tests (no environment needed). */
import type { Prompt, Turn } from '../../src/tree/types.ts';
import type { History, TargetSample } from '../../src/predict/types.ts';
import type { Rng } from '../../src/util/rng.ts';

const WORDS = [
  'river',
  'castle',
  'album',
  'senator',
  'bridge',
  'novel',
  'league',
  'museum',
  'island',
  'opera',
  'harbor',
  'treaty',
  'comet',
  'glacier',
  'temple',
  'violin',
];

export function prompt(id: string, question: string, answers = ['Paris']): Prompt {
  return { id, question, answers };
}

export function turn(type: string, input: string, observation: string): Turn {
  return { thought: '', action: { type, input }, observation };
}

const pick = (rng: Rng) => WORDS[rng.int(WORDS.length)];
const sentence = (rng: Rng, n: number) => Array.from({ length: n }, () => pick(rng)).join(' ');

/**
 * A history of 1–3 search turns with random observation words. Planted rule: success iff some
 * observation contains the word "zebra" (inserted with probability ½), independent of the prompt.
 */
export function plantedSample(rng: Rng, promptId: string): TargetSample {
  const p = prompt(promptId, `Which ${pick(rng)} is near the ${pick(rng)} of ${pick(rng)}?`);
  const t = 1 + rng.int(3);
  const zebra = rng.next() < 0.5;
  const at = rng.int(t);
  const turns: Turn[] = Array.from({ length: t }, (_, i) => {
    const obs = `${sentence(rng, 5)}${i === at && zebra ? ' zebra' : ''} ${sentence(rng, 5)}`;
    return turn('search', sentence(rng, 2), obs);
  });
  return { history: { prompt: p, turns }, target: zebra ? 1 : 0, count: 1, kind: 'prefix' };
}

export function histories(samples: readonly TargetSample[]): History[] {
  return samples.map((s) => s.history);
}
