/**
 * What an action-choosing policy (the embedded one) may do on real QA text, read from the question and
 * the passages retrieved so far — a pure function of (prompt, turns), so a policy update can rebuild
 * the exact choice set every recorded action was drawn from.
 *  - search: the whole question, its capitalised spans, and the titles and capitalised spans of the
 *    passages shown so far (the bridge entities of a multi-hop question);
 *  - answer: titles (also without a trailing "(…)" qualifier), capitalised spans, dates, years and
 *    numbers from the passages and the question, plus yes / no when the question starts like a yes/no
 *    question ("Is", "Are", "Did", "Were both", …).
 * Both lists are capped (most recent passages first) so a turn's choice set stays small.
 */
import type { Turn } from '../../tree/types.ts';
import type { Prompt } from '../../tree/types.ts';

export interface QaCandidates {
  search: string[];
  answer: string[];
}

export interface QaCandidateLimits {
  /** Default 24. */
  maxSearch?: number;
  /** Default 64. */
  maxAnswer?: number;
}

const CONNECTORS = '(?:of|the|de|and|for|in|on|van|von|da|du|la|le|del|der|y|&)';
const CAP_WORD = "[\\p{Lu}][\\p{L}\\p{N}'’.\\-]*";
const CAP_SPAN = new RegExp(`${CAP_WORD}(?:\\s+(?:${CONNECTORS}\\s+)*${CAP_WORD})*`, 'gu');
const MONTHS = 'January|February|March|April|May|June|July|August|September|October|November|December';
const DATE = new RegExp(`\\b(?:(?:${MONTHS}) \\d{1,2}, \\d{3,4}|\\d{1,2} (?:${MONTHS}) \\d{3,4}|(?:${MONTHS}) \\d{3,4})\\b`, 'g');
const NUMBER = /\b\d{1,3}(?:,\d{3})+(?:\.\d+)?\b|\b\d+(?:\.\d+)?\b/g;
/** Capitalised words that start sentences rather than name things. */
const NOT_NAMES = new Set(
  'A An The He She It Its His Her Hers They Their Them This That These Those There Here In On At By For From With As After Before During When While Where Which Who What Why How If But And Or So Also However Although Since Until Despite Its Following Today Then Is Are Was Were Did Do Does Has Have Had Can Could Will Would Both Either Neither Not No Yes'.split(
    ' ',
  ),
);
const YES_NO = /^\s*(is|are|was|were|do|does|did|can|could|has|have|had|will|would|should)\b/i;

/** The passages in an observation: `Doc i(Title: "t") text`. */
export function passagesIn(observation: string): Array<{ title: string; text: string }> {
  const out: Array<{ title: string; text: string }> = [];
  const re = /Doc \d+\(Title: "([^\n]*?)"\) ([\s\S]*?)(?=\nDoc \d+\(Title: |<\/information>|$)/g;
  for (const m of observation.matchAll(re)) out.push({ title: m[1]!, text: m[2]!.trim() });
  return out;
}

/** Capitalised multi-word spans ("University of Oxford"), without sentence-initial function words. */
export function capitalisedSpans(text: string): string[] {
  const out: string[] = [];
  // A full stop after a word of three or more small letters ends a sentence ("England. He"); one after
  // an abbreviation ("St. Louis", "U.S. Army") does not.
  const parts = [...text.matchAll(CAP_SPAN)].flatMap((m) => m[0].split(/(?<=[\p{Ll}\p{N}]{3})\.\s+/u));
  for (const part of parts) {
    let words = part.replace(/[.’'\-]+$/u, '').split(/\s+/);
    while (words.length > 0 && NOT_NAMES.has(words[0]!)) words = words.slice(1);
    while (words.length > 0 && new RegExp(`^${CONNECTORS}$`).test(words.at(-1)!)) words = words.slice(0, -1);
    const span = words.join(' ');
    if (span.length > 1) out.push(span);
  }
  return out;
}

/** Dates, years and other numbers, in order of appearance. */
export function numericSpans(text: string): string[] {
  return [...text.matchAll(DATE), ...text.matchAll(NUMBER)].sort((a, b) => a.index! - b.index!).map((m) => m[0]);
}

export function isYesNoQuestion(question: string): boolean {
  return YES_NO.test(question);
}

/** Search and answer candidates after `turns` (see the module comment). */
export function qaCandidates(prompt: Prompt, turns: readonly Turn[], limits: QaCandidateLimits = {}): QaCandidates {
  const maxSearch = limits.maxSearch ?? 24;
  const maxAnswer = limits.maxAnswer ?? 64;
  const search = new Set<string>();
  const answer = new Set<string>();
  const add = (set: Set<string>, cap: number, s: string) => {
    const t = s.trim();
    if (t.length > 0 && set.size < cap) set.add(t);
  };
  const qSpans = capitalisedSpans(prompt.question);
  add(search, maxSearch, prompt.question);
  for (const s of qSpans) add(search, maxSearch, s);
  if (isYesNoQuestion(prompt.question)) {
    add(answer, maxAnswer, 'yes');
    add(answer, maxAnswer, 'no');
  }
  // Most recent observation first: the latest passages are the likeliest to hold the next hop.
  for (const turn of [...turns].reverse()) {
    for (const p of passagesIn(turn.observation)) {
      add(search, maxSearch, p.title);
      add(answer, maxAnswer, p.title);
      const bare = p.title.replace(/\s*\([^)]*\)\s*$/, '');
      if (bare !== p.title) add(answer, maxAnswer, bare);
      for (const s of capitalisedSpans(p.text)) {
        add(search, maxSearch, s);
        add(answer, maxAnswer, s);
      }
      for (const s of numericSpans(p.text)) add(answer, maxAnswer, s);
    }
  }
  for (const s of qSpans) add(answer, maxAnswer, s);
  return { search: [...search], answer: [...answer] };
}
