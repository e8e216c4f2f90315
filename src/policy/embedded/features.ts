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
/** What the features say of candidate `s` in `ctx`: where it appears, its shape, the words before its latest mention. */
function candidateFacts(ctx: FeatureContext, s: string) {
  const inLastDoc = ctx.lastQueryDoc.includes(s);
  const lastObs = ctx.observations.at(-1) ?? '';
  const inLastObs = lastObs.includes(s);
  const ctxText = inLastDoc ? ctx.lastQueryDoc : inLastObs ? lastObs : '';
  return {
    shape: shape(s),
    inQ: ctx.question.includes(s),
    searched: ctx.searched.has(s),
    title: ctx.titles.has(s),
    inLastDoc,
    inLastObs,
    qLen: Math.min(6, Math.floor(ctx.qWords.length / 2)),
    prev: ctxText ? before(ctxText, s) : undefined,
  };
}

/** The generic features of a candidate, with `extra` (the environment's own, ActionFeatures) after the structural ones. */
export function featureNames(ctx: FeatureContext, action: Action, extra: readonly string[] = []): string[] {
  const t = action.type;
  const { shape: sh, inQ, searched, title, inLastDoc, inLastObs, qLen, prev } = candidateFacts(ctx, action.input);
  const base: string[] = [`${t}`, `${t}|turn=${ctx.turn}`, `${t}|shape=${sh}`];
  base.push(`${t}|inQ=${inQ}`, `${t}|searched=${searched}`, `${t}|title=${title}`, `${t}|inLastDoc=${inLastDoc}`, `${t}|inLastObs=${inLastObs}`);
  base.push(`${t}|inQ=${inQ}|searched=${searched}|inLastDoc=${inLastDoc}`);
  base.push(`${t}|nSearch=${ctx.nSearch}|qLen=${qLen}`, `${t}|nSearch=${ctx.nSearch}|qLen=${qLen}|inLastDoc=${inLastDoc}`);
  // Structural features only exist per question form (its first two words): what works for "who was
  // born earlier" must not leak into "in which country".
  const f = base.map((x) => `${ctx.form}|${x}`);
  f.push(...extra);
  for (const q of ctx.qWords) {
    f.push(`${t}|q=${q}|shape=${sh}`, `${t}|q=${q}|inQ=${inQ}`);
    if (prev) f.push(`${t}|q=${q}|p1=${prev[0]}|d=${inLastDoc}`, `${t}|q=${q}|p2=${prev[1]} ${prev[0]}|d=${inLastDoc}`);
  }
  return f;
}

const FNV_OFFSET = 0x811c9dc5;

/** FNV-1a's state after `h` has taken the characters of `s` (hash(a + b) = fnv(fnv(offset, a), b)). */
function fnv(h: number, s: string): number {
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h;
}

/** FNV-1a hash of a feature name into [0, dim). */
export function hashFeature(name: string, dim: number): number {
  return (fnv(FNV_OFFSET, name) >>> 0) % dim;
}

/** The hash states of `${type}|q=${q}` for each question word, per action type, of a context (shared by its candidates). */
const questionStates = new WeakMap<FeatureContext, Map<string, Int32Array>>();

function questionStatesOf(ctx: FeatureContext, type: string): Int32Array {
  let byType = questionStates.get(ctx);
  if (!byType) questionStates.set(ctx, (byType = new Map()));
  let states = byType.get(type);
  if (!states) {
    const prefix = fnv(FNV_OFFSET, `${type}|q=`);
    states = Int32Array.from(ctx.qWords, (q) => fnv(prefix, q));
    byType.set(type, states);
  }
  return states;
}

/**
 * featureNames(ctx, action, extra) hashed, in the same order (hashFeature of each name), without
 * building the names: the hash runs on from the state of the prefix the names share (the question's
 * form and the action type; `type|q=word` per question word, once per context). A candidate's features
 * are most of the embedded policy's cost per turn and of its warm-start fit.
 */
export function featureIndices(ctx: FeatureContext, action: Action, dim: number, extra: readonly string[] = []): Int32Array {
  const t = action.type;
  const { shape: sh, inQ, searched, title, inLastDoc, inLastObs, qLen, prev: p } = candidateFacts(ctx, action.input);
  const out = new Int32Array(11 + extra.length + ctx.qWords.length * (p ? 4 : 2));
  const index = (h: number) => (h >>> 0) % dim;
  // `${form}|${t}` then each structural feature's rest, as featureNames writes them.
  const ft = fnv(fnv(FNV_OFFSET, `${ctx.form}|`), t);
  const progress = fnv(ft, `|nSearch=${ctx.nSearch}|qLen=${qLen}`);
  let k = 0;
  out[k++] = index(ft);
  out[k++] = index(fnv(ft, `|turn=${ctx.turn}`));
  out[k++] = index(fnv(ft, `|shape=${sh}`));
  out[k++] = index(fnv(ft, `|inQ=${inQ}`));
  out[k++] = index(fnv(ft, `|searched=${searched}`));
  out[k++] = index(fnv(ft, `|title=${title}`));
  out[k++] = index(fnv(ft, `|inLastDoc=${inLastDoc}`));
  out[k++] = index(fnv(ft, `|inLastObs=${inLastObs}`));
  out[k++] = index(fnv(ft, `|inQ=${inQ}|searched=${searched}|inLastDoc=${inLastDoc}`));
  out[k++] = index(progress);
  out[k++] = index(fnv(progress, `|inLastDoc=${inLastDoc}`));
  for (const e of extra) out[k++] = hashFeature(e, dim);
  const shapeRest = `|shape=${sh}`;
  const inQRest = `|inQ=${inQ}`;
  const p1Rest = p ? `|p1=${p[0]}|d=${inLastDoc}` : '';
  const p2Rest = p ? `|p2=${p[1]} ${p[0]}|d=${inLastDoc}` : '';
  for (const q of questionStatesOf(ctx, t)) {
    out[k++] = index(fnv(q, shapeRest));
    out[k++] = index(fnv(q, inQRest));
    if (p) {
      out[k++] = index(fnv(q, p1Rest));
      out[k++] = index(fnv(q, p2Rest));
    }
  }
  return out;
}
