/**
 * BM25 full-text search over titled passages, on MiniSearch (BM25+ scoring, k = 1.2, b = 0.7, δ = 0.5).
 * Terms are lower-cased, split on non-letters/digits, and a short English stop list is dropped so that
 * a question used as a query scores on its content words. Ties are broken by insertion order so
 * results are deterministic.
 */
import MiniSearch from 'minisearch';
import type { Passage } from './search-r1.ts';

const STOP = new Set(
  'a an and are as at be by did do does for from had has have he her his how in is it its of on or she that the their them they this to was were what when where which who whom whose why with'.split(
    ' ',
  ),
);

const SPLIT = /[^\p{L}\p{N}]+/u;

/** A token as an index term: lower-cased; null for empty tokens and stop words. */
function termOf(token: string): string | null {
  const term = token.toLowerCase();
  return term.length === 0 || STOP.has(term) ? null : term;
}

export interface Bm25Options {
  /** Weight of a title match relative to a text match. Default 2. */
  titleBoost?: number;
}

const MINI_OPTIONS = {
  idField: 'n',
  fields: ['title', 'text'],
  tokenize: (s: string) => s.split(SPLIT),
  processTerm: termOf,
};

export class Bm25Index {
  private readonly mini: MiniSearch<Passage & { n: number }>;
  private readonly passages: Passage[];
  private readonly titleBoost: number;

  constructor(passages: readonly Passage[], options: Bm25Options & { serialized?: string } = {}) {
    this.titleBoost = options.titleBoost ?? 2;
    this.passages = passages.slice();
    if (options.serialized !== undefined) {
      this.mini = MiniSearch.loadJSON<Passage & { n: number }>(options.serialized, MINI_OPTIONS);
      if (this.mini.documentCount !== this.passages.length)
        throw new RangeError(`serialized BM25 index holds ${this.mini.documentCount} passages, not ${this.passages.length}`);
    } else {
      this.mini = new MiniSearch<Passage & { n: number }>(MINI_OPTIONS);
      this.mini.addAll(this.passages.map((p, n) => ({ ...p, n })));
    }
  }

  /** The index as JSON (terms and statistics, not the passages): `new Bm25Index(passages, { serialized })` restores it. */
  serialize(): string {
    return JSON.stringify(this.mini);
  }

  get size(): number {
    return this.passages.length;
  }

  /** The search terms of a query as the index sees them (split, lower-cased, stop words dropped). */
  terms(query: string): string[] {
    return query.split(SPLIT).flatMap((t) => termOf(t) ?? []);
  }

  /** The top-k passages for a query, best first, with their BM25 scores. */
  search(query: string, k: number): Passage[] {
    const hits = this.mini.search(query, { boost: { title: this.titleBoost }, combineWith: 'OR' });
    hits.sort((x, y) => y.score - x.score || (x.id as number) - (y.id as number));
    return hits.slice(0, k).map((h) => ({ ...this.passages[h.id as number]!, score: h.score }));
  }
}
