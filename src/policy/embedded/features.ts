import type { Action, Prompt, Turn } from '../../tree/types.ts';
import { STOP_WORDS as STOP, words } from '../../util/words.ts';

/**
 * Hashed sparse features φ(context, candidate) for the embedded policy's linear scorer. Everything is
 * crossed with the action type (search / answer). The signals a multi-hop reader needs:
 *  - where the candidate appears: in the question, already searched, a retrieved passage's title, in
 *    the passage retrieved by the latest search, in the latest observation;
 *  - its shape (year / name / lower-case word / yes-no);
 *  - the two words before its latest mention ("directed by", "founded in"), crossed with each content
 *    word of the question — this is what lets a linear model learn which relation to follow next;
 *  - progress: searches so far, crossed with the question's length bucket.
 * The structural features are crossed with the question's form (first two words), so what is learnt
 * on one kind of question does not leak into another.
 */
export interface FeatureContext {
  question: string;
  qWords: string[];
  observations: string[];
  searched: Set<string>;
  /** Text of the passage titled by the latest search query, if it was retrieved. */
  lastQueryDoc: string;
  titles: Set<string>;
  nSearch: number;
  turn: number;
  /** The question's form: its first two words, lower-cased ("who was", "in which"). */
  form: string;
}

export function featureContext(prompt: Prompt, turns: readonly Turn[]): FeatureContext {
  const qWords = [...new Set(words(prompt.question).filter((w) => !STOP.has(w) && !/^[0-9]+$/.test(w)))];
  const observations = turns.map((t) => t.observation);
  const searched = new Set(turns.filter((t) => t.action.type === 'search').map((t) => t.action.input));
  const titles = new Set<string>();
  for (const o of observations) for (const m of o.matchAll(/Title: "((?:[^"\\]|\\.)*?)"\)/g)) titles.add(m[1]!);
  let lastQueryDoc = '';
  const last = [...turns].reverse().find((t) => t.action.type === 'search');
  if (last) {
    const esc = last.action.input.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const m = new RegExp(`Title: "${esc}"\\) ([^\\n<]*)`).exec(last.observation);
    if (m) lastQueryDoc = m[1]!;
  }
  const form = words(prompt.question).slice(0, 2).join(' ');
  return { form, question: prompt.question, qWords, observations, searched, lastQueryDoc, titles, nSearch: searched.size, turn: turns.length };
}

function shape(s: string): string {
  if (/^(yes|no)$/i.test(s)) return 'yesno';
  if (/^[0-9]{3,4}$/.test(s)) return 'year';
  if (/^[A-Z]/.test(s)) return 'name';
  return 'lower';
}

/** The two words before the latest mention of `s` in `text` ('' when absent). */
function before(text: string, s: string): [string, string] | undefined {
  const i = text.lastIndexOf(s);
  if (i < 0) return undefined;
  const w = words(text.slice(Math.max(0, i - 60), i));
  return [w.at(-1) ?? '^', w.at(-2) ?? '^'];
}

/** The generic features of a candidate, with `extra` (the environment's own, ActionFeatures) after the structural ones. */
export function featureNames(ctx: FeatureContext, action: Action, extra: readonly string[] = []): string[] {
  const t = action.type;
  const s = action.input;
  const base: string[] = [`${t}`, `${t}|turn=${ctx.turn}`, `${t}|shape=${shape(s)}`];
  const inQ = ctx.question.includes(s);
  const searched = ctx.searched.has(s);
  const title = ctx.titles.has(s);
  const inLastDoc = ctx.lastQueryDoc.includes(s);
  const lastObs = ctx.observations.at(-1) ?? '';
  const inLastObs = lastObs.includes(s);
  base.push(`${t}|inQ=${inQ}`, `${t}|searched=${searched}`, `${t}|title=${title}`, `${t}|inLastDoc=${inLastDoc}`, `${t}|inLastObs=${inLastObs}`);
  base.push(`${t}|inQ=${inQ}|searched=${searched}|inLastDoc=${inLastDoc}`);
  const qLen = Math.min(6, Math.floor(ctx.qWords.length / 2));
  base.push(`${t}|nSearch=${ctx.nSearch}|qLen=${qLen}`, `${t}|nSearch=${ctx.nSearch}|qLen=${qLen}|inLastDoc=${inLastDoc}`);
  // Structural features only exist per question form (its first two words): what works for "who was
  // born earlier" must not leak into "in which country".
  const f = base.map((x) => `${ctx.form}|${x}`);
  f.push(...extra);
  const ctxText = inLastDoc ? ctx.lastQueryDoc : inLastObs ? lastObs : '';
  const prev = ctxText ? before(ctxText, s) : undefined;
  const sh = shape(s);
  for (const q of ctx.qWords) {
    f.push(`${t}|q=${q}|shape=${sh}`, `${t}|q=${q}|inQ=${inQ}`);
    if (prev) f.push(`${t}|q=${q}|p1=${prev[0]}|d=${inLastDoc}`, `${t}|q=${q}|p2=${prev[1]} ${prev[0]}|d=${inLastDoc}`);
  }
  return f;
}

/** FNV-1a hash of a feature name into [0, dim). */
export function hashFeature(name: string, dim: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) {
    h ^= name.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % dim;
}

export function featureIndices(ctx: FeatureContext, action: Action, dim: number, extra: readonly string[] = []): Int32Array {
  const names = featureNames(ctx, action, extra);
  const out = new Int32Array(names.length);
  for (let i = 0; i < names.length; i++) out[i] = hashFeature(names[i]!, dim);
  return out;
}
