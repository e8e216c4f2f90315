/**
 * BM25 search tools over dataset paragraphs, in the two corpus modes of the real datasets:
 *  - per-question: each question searches only its own paragraphs (HotpotQA's distractor setting);
 *  - pooled: every question searches all distinct paragraphs of the split.
 */
import { Bm25Index } from './bm25.ts';
import type { QaExample } from '../qa/datasets.ts';
import type { SearchTool } from './search-env.ts';
import type { Passage } from './search-r1.ts';
import type { Prompt } from '../../tree/types.ts';

export type CorpusMode = 'per-question' | 'pooled';

/** Distinct paragraphs (same title and text = same paragraph) of a set of examples. */
export function pooledPassages(examples: readonly QaExample[]): Passage[] {
  const seen = new Map<string, Passage>();
  for (const e of examples) {
    for (const p of e.paragraphs) {
      const key = `${p.title}\n${p.text}`;
      if (!seen.has(key)) seen.set(key, { id: `p${seen.size}`, title: p.title, text: p.text });
    }
  }
  return [...seen.values()];
}

export function perQuestionTool(): SearchTool {
  const cache = new Map<string, Bm25Index>();
  return {
    name: 'bm25-per-question',
    search(query, { prompt, k }) {
      let index = cache.get(prompt.id);
      if (!index) {
        index = new Bm25Index(paragraphsOf(prompt));
        cache.set(prompt.id, index);
      }
      return index.search(query, k);
    },
  };
}

export function pooledTool(examples: readonly QaExample[]): SearchTool & { index: Bm25Index } {
  const index = new Bm25Index(pooledPassages(examples));
  return { name: 'bm25-pooled', index, search: (query, { k }) => index.search(query, k) };
}

export function corpusTool(mode: CorpusMode, examples: readonly QaExample[]): SearchTool {
  return mode === 'pooled' ? pooledTool(examples) : perQuestionTool();
}

function paragraphsOf(prompt: Prompt): Passage[] {
  const ps = prompt.meta?.paragraphs;
  if (!Array.isArray(ps)) throw new Error(`prompt ${prompt.id} has no meta.paragraphs; per-question search needs the question's own paragraphs`);
  return ps as Passage[];
}
