/**
 * Per-turn token work, done once per Turn object. Prefix histories built with `turnsTo` share their
 * Turn objects, so the ~10k histories of a step tokenise each turn once instead of once per prefix.
 * The cache is keyed by object identity (a WeakMap) and never changes a result, only its cost.
 */
import type { Turn } from '../tree/types.ts';
import { hashToken, namespaceSeed } from './hash.ts';
import { coarseNumber, isNumber, normalizedText, tokenize } from './text.ts';

/** Namespace seeds: the same word hashes independently in each (see hash.ts). */
export const NS = {
  question: namespaceSeed('q'),
  questionPair: namespaceSeed('q2'),
  questionTemplate: namespaceSeed('qt'),
  questionTemplatePair: namespaceSeed('qt2'),
  action: namespaceSeed('a'),
  actionPair: namespaceSeed('a2'),
  actionType: namespaceSeed('t'),
  actionTypePair: namespaceSeed('t2'),
  observation: namespaceSeed('o'),
  observationPair: namespaceSeed('o2'),
  lastAction: namespaceSeed('la'),
  lastObservation: namespaceSeed('lo'),
  lastObservationPair: namespaceSeed('lo2'),
  thought: namespaceSeed('th'),
  lastThought: namespaceSeed('lth'),
} as const;

/** What features need from one turn. Hash lists are de-duplicated within the turn. */
export interface TurnInfo {
  type: string;
  /** Normalised "type: input", to spot repeated searches. */
  key: string;
  action: Uint32Array;
  actionPair: Uint32Array;
  observation: Uint32Array;
  observationPair: Uint32Array;
  lastAction: Uint32Array;
  lastObservation: Uint32Array;
  lastObservationPair: Uint32Array;
  thought: Uint32Array;
  lastThought: Uint32Array;
  /** Normalised observation text (for phrase containment). */
  observationNorm: string;
  observationWords: ReadonlySet<string>;
  observationTokens: number;
  invalid: boolean;
  error: boolean;
  /** Normalised answer text when the action is an answer. */
  answerNorm?: string;
}

/** Word tokens plus a coarse token for every number (so 0.71 and 0.74 share "~0.7"). */
export function wordsWithNumbers(tokens: readonly string[]): string[] {
  const out: string[] = [];
  for (const t of tokens) {
    out.push(t);
    if (isNumber(t)) out.push(coarseNumber(t));
  }
  return out;
}

/** De-duplicated hashes of `tokens` in a namespace (first occurrence order; deterministic). */
export function hashAll(seed: number, tokens: readonly string[]): Uint32Array {
  const seen = new Set<number>();
  for (const t of tokens) seen.add(hashToken(seed, t));
  return Uint32Array.from(seen);
}

/** Adjacent word pairs. */
export function pairs(tokens: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 1; i < tokens.length; i++) out.push(`${tokens[i - 1]} ${tokens[i]}`);
  return out;
}

export class TurnCache {
  private cache = new WeakMap<Turn, TurnInfo>();

  constructor(private readonly maxTokensPerText: number) {}

  get(turn: Turn): TurnInfo {
    let info = this.cache.get(turn);
    if (!info) {
      info = this.compute(turn);
      this.cache.set(turn, info);
    }
    return info;
  }

  private compute(turn: Turn): TurnInfo {
    const type = turn.action.type.toLowerCase();
    const actTokens = tokenize(turn.action.input, this.maxTokensPerText);
    const typed = wordsWithNumbers(actTokens).map((w) => `${type}:${w}`);
    const obsTokens = tokenize(turn.observation, this.maxTokensPerText);
    const obsWords = wordsWithNumbers(obsTokens);
    const obsPairs = pairs(obsTokens);
    const thoughtWords = wordsWithNumbers(tokenize(turn.thought, this.maxTokensPerText));
    return {
      type,
      key: `${type}: ${actTokens.join(' ')}`,
      action: hashAll(NS.action, typed),
      actionPair: hashAll(
        NS.actionPair,
        pairs(actTokens).map((p) => `${type}:${p}`),
      ),
      observation: hashAll(NS.observation, obsWords),
      observationPair: hashAll(NS.observationPair, obsPairs),
      lastAction: hashAll(NS.lastAction, [`type:${type}`, ...typed]),
      lastObservation: hashAll(NS.lastObservation, obsWords),
      lastObservationPair: hashAll(NS.lastObservationPair, obsPairs),
      thought: hashAll(NS.thought, thoughtWords),
      lastThought: hashAll(NS.lastThought, thoughtWords),
      observationNorm: normalizedText(turn.observation),
      observationWords: new Set(obsTokens),
      observationTokens: obsTokens.length,
      invalid: type === 'invalid' || turn.error?.code === 'parse_error',
      error: turn.error !== undefined,
      ...(type === 'answer' ? { answerNorm: normalizedText(turn.action.input).trim() } : {}),
    };
  }
}
