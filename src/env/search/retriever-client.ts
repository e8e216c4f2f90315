/**
 * Client for a Search-R1-style retrieval service: POST {url}/retrieve with
 * `{ queries, topk, return_scores }`; the reply is `{ result: [...] }` with one list per query, each
 * entry `{ document: { id?, contents }, score }` (or the bare document when scores are off).
 * `contents` follows Search-R1's corpus convention `"Title"\nText`. Usable directly as a SearchTool.
 */
import { z } from 'zod';
import type { SearchTool } from './search-env.ts';
import { fromContents, type Passage } from './search-r1.ts';
import { readBoundedBody } from '../../util/bounded-body.ts';

export class RetrieverError extends Error {
  override name = 'RetrieverError';
}

const doc = z.object({ id: z.union([z.string(), z.number()]).optional(), contents: z.string() });
const hit = z.union([z.object({ document: doc, score: z.number() }), doc]);
const reply = z.object({ result: z.array(z.array(hit)) });

export interface RetrieverClientOptions {
  /** Base URL, e.g. http://127.0.0.1:8000 (a trailing /retrieve is accepted too). */
  url: string;
  timeoutMs?: number;
  /** The largest reply read (bytes); a longer one is refused. Default {@link MAX_RETRIEVER_REPLY_BYTES}. */
  maxReplyBytes?: number;
}

/**
 * The largest reply read from a retriever: `trace-rl retriever serve` answers at most 1,024 queries of
 * 1,000 documents each, and a Search-R1 passage is about 600 bytes; a server that sends more is refused
 * before its reply is held in memory.
 */
export const MAX_RETRIEVER_REPLY_BYTES = 64 * 1024 * 1024;

/** The reply's body, read up to `maxBytes` (the declared length is checked first, then what arrives). */
async function boundedBody(res: Response, maxBytes: number, endpoint: string): Promise<string> {
  const refuse = () => new RetrieverError(`retriever at ${endpoint} sent a reply over ${maxBytes} bytes; refused (ask for fewer queries or a smaller topk)`);
  return Buffer.from(await readBoundedBody(res, { maxBytes, refuse })).toString('utf8');
}

export interface RetrievedDocument {
  id?: string;
  contents: string;
  score?: number;
}

export class RetrieverClient implements SearchTool {
  readonly name = 'search-r1-retriever';
  private readonly endpoint: string;
  private readonly timeoutMs: number;
  private readonly maxReplyBytes: number;

  constructor(options: RetrieverClientOptions) {
    this.maxReplyBytes = options.maxReplyBytes ?? MAX_RETRIEVER_REPLY_BYTES;
    const base = options.url.replace(/\/+$/, '');
    this.endpoint = base.endsWith('/retrieve') ? base : `${base}/retrieve`;
    this.timeoutMs = options.timeoutMs ?? 30_000;
  }

  /** One request for several queries; returns per-query lists, best first. */
  async retrieve(queries: readonly string[], topk: number, options: { signal?: AbortSignal; returnScores?: boolean } = {}): Promise<RetrievedDocument[][]> {
    const signals = [AbortSignal.timeout(this.timeoutMs), ...(options.signal ? [options.signal] : [])];
    let res: Response;
    try {
      res = await fetch(this.endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ queries, topk, return_scores: options.returnScores ?? true }),
        signal: AbortSignal.any(signals),
      });
    } catch (e) {
      throw new RetrieverError(`retriever at ${this.endpoint} unreachable: ${(e as Error).message}`);
    }
    if (!res.ok) throw new RetrieverError(`retriever at ${this.endpoint} answered HTTP ${res.status}: ${(await res.text()).slice(0, 200)}`);
    const text = await boundedBody(res, this.maxReplyBytes, this.endpoint).catch((e: unknown) => {
      if (e instanceof RetrieverError) throw e;
      throw new RetrieverError(`retriever at ${this.endpoint}: the reply was cut off (${(e as Error).message})`);
    });
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    const parsed = reply.safeParse(json);
    if (!parsed.success)
      throw new RetrieverError(
        `retriever at ${this.endpoint} sent an unexpected reply: ${parsed.error.issues[0]?.message ?? 'bad shape'}; expected {result: [[{document: {contents}, score}]]}`,
      );
    if (parsed.data.result.length !== queries.length)
      throw new RetrieverError(`retriever sent ${parsed.data.result.length} result lists for ${queries.length} queries`);
    return parsed.data.result.map((list) =>
      list.map((h) => {
        const d = 'document' in h ? h.document : h;
        return { ...(d.id !== undefined ? { id: String(d.id) } : {}), contents: d.contents, ...('score' in h ? { score: h.score } : {}) };
      }),
    );
  }

  async search(query: string, options: { k: number; signal?: AbortSignal }): Promise<Passage[]> {
    const [list] = await this.retrieve([query], options.k, { signal: options.signal });
    return (list ?? []).map((d, i) => ({ id: d.id ?? String(i), ...fromContents(d.contents), ...(d.score !== undefined ? { score: d.score } : {}) }));
  }
}
