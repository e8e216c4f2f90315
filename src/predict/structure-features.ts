/**
 * Structure features of a prefix history: a small dense block of named numbers (depth, turns left,
 * invalid actions, tool errors, repeated searches, whether the answer has been seen…), each scaled to
 * about [0, 1] so they sit alongside the hashed text features without normalisation.
 */
import type { History } from './types.ts';
import type { TurnCache, TurnInfo } from './turn-cache.ts';
import { normalizedText, tokenize } from './text.ts';

/** Names of the structure features in order (documented in docs/predictor.md). */
export const STRUCTURE_FEATURES = [
  'depth', // t / 10
  'depth=0',
  'depth=1',
  'depth=2',
  'depth=3',
  'depth=4',
  'depth=5',
  'depth=6',
  'depth>=7',
  'turn_limit_known',
  'turns_left', // (T_max − t) / T_max
  'one_turn_left',
  'no_turn_left',
  'invalid_actions', // log1p(count) / 2
  'last_invalid',
  'tool_errors', // log1p(count) / 2
  'last_error',
  'searches', // log1p(count) / 2
  'repeated_actions', // log1p(count of actions equal to an earlier one) / 2
  'last_repeated',
  'gold_in_observations', // a gold answer appears (whole words) in some observation
  'gold_in_last_observation',
  'question_coverage', // share of the question's words (≥ 3 letters) seen in observations
  'empty_observations', // log1p(count) / 2
  'observation_length', // log1p(mean tokens) / 8
  'answered', // last action is an answer
  'answer_grounded', // that answer's text appears in some observation
] as const;

export const STRUCTURE_DIM = STRUCTURE_FEATURES.length;

export interface StructureOptions {
  /** Turn limit T_max; when absent, a prompt's numeric `meta.maxTurns` is used, else "unknown". */
  maxTurns?: number;
  /** Use the prompt's gold answers (known for training prompts) for the gold_* features. Default true. */
  useGold: boolean;
}

const l1p = (x: number, s: number) => Math.log1p(x) / s;

/** Writes the structure block of `h` into `out` (length STRUCTURE_DIM). */
export function structureFeatures(h: History, cache: TurnCache, opts: StructureOptions, out: Float32Array): void {
  out.fill(0);
  const t = h.turns.length;
  const infos: TurnInfo[] = h.turns.map((turn) => cache.get(turn));
  let f = 0;
  out[f++] = t / 10;
  for (let d = 0; d < 8; d++) out[f++] = (d < 7 ? t === d : t >= 7) ? 1 : 0;
  const metaLimit = h.prompt.meta?.maxTurns;
  const limit = opts.maxTurns ?? (typeof metaLimit === 'number' ? metaLimit : undefined);
  out[f++] = limit !== undefined ? 1 : 0;
  out[f++] = limit !== undefined ? Math.max(0, limit - t) / limit : 0;
  out[f++] = limit !== undefined && limit - t === 1 ? 1 : 0;
  out[f++] = limit !== undefined && limit - t <= 0 ? 1 : 0;
  const last = infos[t - 1];
  out[f++] = l1p(
    count(infos, (i) => i.invalid),
    2,
  );
  out[f++] = last?.invalid ? 1 : 0;
  out[f++] = l1p(
    count(infos, (i) => i.error),
    2,
  );
  out[f++] = last?.error ? 1 : 0;
  out[f++] = l1p(
    count(infos, (i) => i.type === 'search'),
    2,
  );
  const seen = new Set<string>();
  let repeated = 0;
  let lastRepeated = false;
  for (const i of infos) {
    lastRepeated = seen.has(i.key);
    if (lastRepeated) repeated++;
    seen.add(i.key);
  }
  out[f++] = l1p(repeated, 2);
  out[f++] = lastRepeated ? 1 : 0;
  const gold = opts.useGold ? h.prompt.answers.map(normalizedText).filter((a) => a.trim().length > 0) : [];
  const hasGold = (i: TurnInfo) => gold.some((g) => i.observationNorm.includes(g));
  out[f++] = infos.some(hasGold) ? 1 : 0;
  out[f++] = last && hasGold(last) ? 1 : 0;
  const qWords = [...new Set(tokenize(h.prompt.question).filter((w) => w.length >= 3))];
  const covered = qWords.filter((w) => infos.some((i) => i.observationWords.has(w))).length;
  out[f++] = qWords.length > 0 ? covered / qWords.length : 0;
  out[f++] = l1p(
    count(infos, (i) => i.observationTokens === 0),
    2,
  );
  out[f++] = t > 0 ? l1p(infos.reduce((s, i) => s + i.observationTokens, 0) / t, 8) : 0;
  out[f++] = last?.type === 'answer' ? 1 : 0;
  const answer = last?.answerNorm;
  out[f++] = answer ? (infos.slice(0, -1).some((i) => i.observationNorm.includes(` ${answer} `)) ? 1 : 0) : 0;
}

function count(infos: readonly TurnInfo[], pred: (i: TurnInfo) => boolean): number {
  let c = 0;
  for (const i of infos) if (pred(i)) c++;
  return c;
}
