/**
 * A Search-R1-compatible retrieval service over a local corpus (BM25), so any Search-R1 agent can
 * point at it: POST /retrieve `{ queries: string[], topk?: number, return_scores?: boolean }` →
 * `{ result: [[{ document: { id, contents }, score }]] }` (bare documents when return_scores is false).
 * The corpus is JSONL, one passage per line: Search-R1's `{ id, contents: "\"Title\"\nText" }` or
 * `{ id?, title, text }`.
 */
import { readJsonLinesFile, type ReadLimits } from '../../util/bounded-read.ts';
import type { Hono } from 'hono';
import { z } from 'zod';
import { Bm25Index } from './bm25.ts';
import { DatasetError } from '../qa/datasets.ts';
import { createServerApp, listen, nextTurn, readJson, tooLarge, type ListenOptions, type RunningServer } from '../../http/index.ts';
import { fromContents, toContents, type Passage } from './search-r1.ts';

const corpusLine = z.union([
  z.object({ id: z.union([z.string(), z.number()]).optional(), contents: z.string() }),
  z.object({ id: z.union([z.string(), z.number()]).optional(), title: z.string(), text: z.string() }),
]);

/**
 * A corpus is held whole in the BM25 index, so it may be larger than a dataset but not unbounded:
 * 1 GiB of JSONL (a few million passages), lines as long as a dataset's.
 */
export const CORPUS_LIMITS: ReadLimits = { maxFileBytes: 1024 * 1024 * 1024, maxLineBytes: 4 * 1024 * 1024 };

/** Reads a corpus JSONL file; a bad line is a DatasetError with file:line. */
export function loadCorpus(file: string): Passage[] {
  const out: Passage[] = [];
  for (const { line, value, error } of readJsonLinesFile(file, CORPUS_LIMITS)) {
    if (error !== undefined) throw new DatasetError(file, line, 'not valid JSON; each line must be {"id", "contents"} or {"title", "text"}');
    const r = corpusLine.safeParse(value);
    if (!r.success) throw new DatasetError(file, line, 'expected {"id", "contents": "\\"Title\\"\\nText"} or {"title", "text"}');
    const id = r.data.id !== undefined ? String(r.data.id) : String(out.length);
    out.push('contents' in r.data ? { id, ...fromContents(r.data.contents) } : { id, title: r.data.title, text: r.data.text });
  }
  return out;
}

const request = z.object({
  queries: z.array(z.string()).min(1),
  topk: z.number().int().positive().max(1000).nullish(),
  return_scores: z.boolean().default(false),
});

/** What one request may ask of the retriever (docs/reliability.md); the CLI flags set them. */
export interface RetrieverLimits {
  /** Largest request body in bytes (`--max-body-bytes`, default 1 MiB). */
  maxBodyBytes: number;
  /** Most queries in one request (`--max-queries`, default 1,024). */
  maxQueries: number;
  /** Most search terms in one query, after stop words (`--max-query-terms`, default 64). */
  maxQueryTerms: number;
}

export const DEFAULT_RETRIEVER_LIMITS: RetrieverLimits = { maxBodyBytes: 1 << 20, maxQueries: 1024, maxQueryTerms: 64 };

export interface RetrieverOptions {
  defaultTopk?: number;
  limits?: Partial<RetrieverLimits>;
}

/**
 * The hono app. Every request is bounded before any search runs (body size, queries, terms per
 * query: 413 naming the limit), and queries are searched one per event-loop turn so `/health` and
 * a stop signal are served while a large batch runs.
 */
export function createRetrieverApp(index: Bm25Index, options: RetrieverOptions = {}): Hono {
  const limits = { ...DEFAULT_RETRIEVER_LIMITS, ...options.limits };
  const app = createServerApp({ maxBodyBytes: limits.maxBodyBytes, bodySetting: '--max-body-bytes', health: () => ({ passages: index.size }) });
  app.post('/retrieve', async (c) => {
    const body = await readJson(c, request);
    if (body.queries.length > limits.maxQueries)
      throw tooLarge(`${body.queries.length.toLocaleString('en')} queries`, limits.maxQueries, 'queries per request', '--max-queries', 'too_many_queries');
    body.queries.forEach((q, i) => {
      const terms = index.terms(q).length;
      if (terms > limits.maxQueryTerms)
        throw tooLarge(
          `queries[${i}] with ${terms.toLocaleString('en')} terms`,
          limits.maxQueryTerms,
          'terms per query',
          '--max-query-terms',
          'too_many_terms',
        );
    });
    const k = body.topk ?? options.defaultTopk ?? 3;
    const result: unknown[] = [];
    for (const q of body.queries) {
      if (c.req.raw.signal.aborted) break;
      result.push(
        index.search(q, k).map((p) => {
          const document = { id: p.id, contents: toContents(p) };
          return body.return_scores ? { document, score: p.score ?? 0 } : document;
        }),
      );
      await nextTurn();
    }
    return c.json({ result });
  });
  return app;
}

/** Serves the app; port 0 picks a free port. */
export function serveRetriever(index: Bm25Index, options: RetrieverOptions & ListenOptions): Promise<RunningServer> {
  return listen(createRetrieverApp(index, options), options);
}
