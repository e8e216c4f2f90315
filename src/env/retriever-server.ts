/**
 * A Search-R1-compatible retrieval service over a local corpus (BM25), so any Search-R1 agent can
 * point at it: POST /retrieve `{ queries: string[], topk?: number, return_scores?: boolean }` →
 * `{ result: [[{ document: { id, contents }, score }]] }` (bare documents when return_scores is false).
 * The corpus is JSONL, one passage per line: Search-R1's `{ id, contents: "\"Title\"\nText" }` or
 * `{ id?, title, text }`.
 */
import { jsonLines } from '../util/json-lines.ts';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { Hono } from 'hono';
import { serve } from '@hono/node-server';
import { z } from 'zod';
import { Bm25Index } from './bm25.ts';
import { DatasetError } from './datasets.ts';
import { fromContents, toContents, type Passage } from './search-r1.ts';

const corpusLine = z.union([
  z.object({ id: z.union([z.string(), z.number()]).optional(), contents: z.string() }),
  z.object({ id: z.union([z.string(), z.number()]).optional(), title: z.string(), text: z.string() }),
]);

/** Reads a corpus JSONL file; a bad line is a DatasetError with file:line. */
export function loadCorpus(file: string): Passage[] {
  const out: Passage[] = [];
  for (const { line, value, error } of jsonLines(readFileSync(file, 'utf8'))) {
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

export function createRetrieverApp(index: Bm25Index, options: { defaultTopk?: number } = {}): Hono {
  const app = new Hono();
  app.get('/health', (c) => c.json({ status: 'ok', passages: index.size }));
  app.post('/retrieve', async (c) => {
    const body = request.safeParse(await c.req.json().catch(() => undefined));
    if (!body.success) return c.json({ error: `bad request: ${body.error.issues.map((x) => `${x.path.join('.') || 'body'}: ${x.message}`).join('; ')}` }, 400);
    const k = body.data.topk ?? options.defaultTopk ?? 3;
    const result = body.data.queries.map((q) =>
      index.search(q, k).map((p) => {
        const document = { id: p.id, contents: toContents(p) };
        return body.data.return_scores ? { document, score: p.score ?? 0 } : document;
      }),
    );
    return c.json({ result });
  });
  return app;
}

export interface RunningServer {
  port: number;
  url: string;
  close(): Promise<void>;
}

/** Serves the app; port 0 picks a free port. */
export function serveRetriever(index: Bm25Index, options: { port: number; host?: string; defaultTopk?: number }): Promise<RunningServer> {
  const host = options.host ?? '127.0.0.1';
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: createRetrieverApp(index, options).fetch, port: options.port, hostname: host }, (info: AddressInfo) => {
      resolve({
        port: info.port,
        url: `http://${host}:${info.port}`,
        close: () =>
          new Promise<void>((res, rej) => {
            server.close((e) => (e ? rej(e) : res()));
            // Keep-alive connections from clients would otherwise hold the server open.
            (server as { closeAllConnections?: () => void }).closeAllConnections?.();
          }),
      });
    });
    server.on('error', reject);
  });
}
