/**
 * Answer metrics exactly as the official HotpotQA evaluation (`hotpot_evaluate_v1.py`) computes them,
 * re-implemented from its documented behaviour:
 *   normalise(s) = collapse_ws(drop_articles(strip_ascii_punct(lower(s))))
 *   EM = [normalise(pred) = normalise(gold)]
 *   F1 = 2PR / (P + R) on whitespace tokens with multiset overlap; 0 when there is no overlap, and 0
 *        when either side normalises to yes / no / noanswer and the two differ.
 * Python's `\b` and `str.split()` are Unicode-aware; JavaScript's are not, so both are spelled out.
 * With several gold answers each metric is its own maximum over them (as SQuAD's evaluation does).
 */

/** Python's `string.punctuation` (ASCII only, as in the official script). */
const ASCII_PUNCT = new Set('!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~');
/** Python `\w` on str: letters, numbers, underscore. */
const ARTICLES = /(?<![\p{L}\p{N}_])(?:a|an|the)(?![\p{L}\p{N}_])/gu;
/** The characters Python's `str.split()` treats as whitespace (JS `\s` differs: it has U+FEFF, lacks U+001C–U+001F and U+0085). */
const PY_WHITESPACE = /[\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/u;

export interface AnswerScore {
  em: number;
  f1: number;
  precision: number;
  recall: number;
}

function pySplit(s: string): string[] {
  return s.split(PY_WHITESPACE).filter((t) => t.length > 0);
}

/** The official `normalize_answer`: lower-case, strip ASCII punctuation, drop a/an/the, collapse whitespace. */
export function normalizeAnswer(s: string): string {
  const lower = s.toLowerCase();
  let noPunct = '';
  for (const ch of lower) if (!ASCII_PUNCT.has(ch)) noPunct += ch;
  return pySplit(noPunct.replace(ARTICLES, ' ')).join(' ');
}

const SPECIAL = new Set(['yes', 'no', 'noanswer']);

/** EM, F1, precision and recall of one prediction against one gold answer. */
export function scoreOne(prediction: string, gold: string): AnswerScore {
  const p = normalizeAnswer(prediction);
  const g = normalizeAnswer(gold);
  const em = p === g ? 1 : 0;
  const zero = { em, f1: 0, precision: 0, recall: 0 };
  if ((SPECIAL.has(p) || SPECIAL.has(g)) && p !== g) return zero;
  const pTokens = p.split(' ').filter((t) => t.length > 0);
  const gTokens = g.split(' ').filter((t) => t.length > 0);
  const counts = new Map<string, number>();
  for (const t of gTokens) counts.set(t, (counts.get(t) ?? 0) + 1);
  let same = 0;
  for (const t of pTokens) {
    const c = counts.get(t) ?? 0;
    if (c > 0) {
      same++;
      counts.set(t, c - 1);
    }
  }
  if (same === 0) return zero;
  const precision = same / pTokens.length;
  const recall = same / gTokens.length;
  return { em, f1: (2 * precision * recall) / (precision + recall), precision, recall };
}

/** Scores against one or several golds; each metric is its maximum over the golds. */
export function scoreAnswer(prediction: string, gold: string | readonly string[]): AnswerScore {
  const golds = typeof gold === 'string' ? [gold] : gold;
  if (golds.length === 0) throw new RangeError('scoreAnswer: at least one gold answer is needed');
  const best: AnswerScore = { em: 0, f1: 0, precision: 0, recall: 0 };
  for (const g of golds) {
    const s = scoreOne(prediction, g);
    best.em = Math.max(best.em, s.em);
    best.f1 = Math.max(best.f1, s.f1);
    best.precision = Math.max(best.precision, s.precision);
    best.recall = Math.max(best.recall, s.recall);
  }
  return best;
}

/**
 * When an answer counts as a success (reward 1). TRACE-SPEC §2 reads the paper's QA metric as
 * "correct when token F1 ≥ 0.3": rule 'f1' (default). 'em' needs exact match; 'f1-or-em' accepts either
 * (they differ only when both sides normalise to the empty string: EM 1, F1 0).
 */
export interface SuccessRule {
  rule: 'f1' | 'em' | 'f1-or-em';
  /** F1 threshold for 'f1' and 'f1-or-em'. */
  threshold: number;
}

export const DEFAULT_SUCCESS: SuccessRule = { rule: 'f1', threshold: 0.3 };

export function isSuccess(score: AnswerScore, rule: SuccessRule = DEFAULT_SUCCESS): boolean {
  switch (rule.rule) {
    case 'em':
      return score.em === 1;
    case 'f1':
      return score.f1 >= rule.threshold;
    case 'f1-or-em':
      return score.em === 1 || score.f1 >= rule.threshold;
    default: {
      const never: never = rule.rule;
      throw new RangeError(`unknown success rule ${String(never)}`);
    }
  }
}
