/**
 * Real multi-hop QA (HotpotQA, 2WikiMultiHopQA, MuSiQue, Bamboogle, or your JSONL) as a Search-R1
 * environment. Retrieval is one of:
 *  - `per-question`: the question's own paragraphs (the distractor setting); a question that has none
 *    (Bamboogle, plain JSONL) searches the pooled index instead;
 *  - `pooled`: one BM25 index over every distinct paragraph of the chosen datasets, cached on disk;
 *  - `url`: a Search-R1-compatible retriever service (`trace-rl retriever serve`, Search-R1's own).
 * The reward is Search-R1's: only the text inside `<answer>…</answer>` is scored (a turn without a
 * tag is an invalid action and an episode without an answer scores 0), success by EM or F1 ≥ threshold.
 * A retriever failure (timeout, HTTP error, malformed reply) is thrown as a RetrieverError, which the
 * rollout engine retries and then records on the turn as a tool error: it never ends a run.
 */
import { pooledPassages } from '../search/corpus.ts';
import { Bm25Index } from '../search/bm25.ts';
import { RetrieverClient } from '../search/retriever-client.ts';
import { SearchEnv, type SearchState, type SearchTool } from '../search/search-env.ts';
import type { SuccessRule } from './qa-metrics.ts';
import type { Passage } from '../search/search-r1.ts';
import type { Prompt } from '../../tree/types.ts';
import { qaCandidates, type QaCandidates } from './candidates.ts';
import { cachedIndex } from './pooled-index.ts';
import { loadSources, type LoadedSource, type QaSourceSpec } from './sources.ts';
import { splitSources } from './split.ts';

export type QaRetrieval = 'per-question' | 'pooled' | 'url';

export interface QaEnvOptions {
  datasets: readonly QaSourceSpec[];
  retrieval: QaRetrieval;
  /** `url` retrieval: the service's base URL. */
  retrieverUrl?: string;
  /** `url` retrieval: per-request timeout. Default 30 s. */
  retrieverTimeoutMs?: number;
  /** Where the pooled index is cached (default ~/.cache/trace-rl/bm25). */
  cacheDir?: string;
  dataDir?: string;
  /** Seed of the split. */
  seed: number;
  testFraction: number;
  topK?: number;
  maxTurns?: number;
  success?: SuccessRule;
}

/** How the pooled index was obtained (for logs and the bench). */
export interface PoolInfo {
  passages: number;
  source: 'hit' | 'built' | 'built-uncached';
  file: string;
}

export class QaEnv extends SearchEnv {
  readonly sources: LoadedSource[];
  readonly train: Prompt[];
  readonly test: Prompt[];
  /** Held-out questions per dataset name, in the order the datasets were listed. */
  readonly heldOut: Map<string, Prompt[]>;
  readonly retrieval: QaRetrieval;
  private readonly pool: () => { index: Bm25Index; info: PoolInfo };

  constructor(options: QaEnvOptions) {
    const sources = loadSources(options.datasets, { dataDir: options.dataDir });
    let built: { index: Bm25Index; info: PoolInfo } | undefined;
    const pool = () => {
      if (!built) {
        const passages = pooledPassages(sources.flatMap((s) => s.examples));
        const c = cachedIndex(passages, { cacheDir: options.cacheDir });
        built = { index: c.index, info: { passages: passages.length, source: c.source, file: c.file } };
      }
      return built;
    };
    super({
      tool: qaTool(options, pool),
      topK: options.topK,
      maxTurns: options.maxTurns ?? 6,
      success: options.success,
      name: `qa:${sources.map((s) => s.name).join('+')}:${options.retrieval}`,
    });
    this.sources = sources;
    this.retrieval = options.retrieval;
    this.pool = pool;
    const split = splitSources(sources, { seed: options.seed, testFraction: options.testFraction });
    this.train = split.train;
    this.test = split.test;
    this.heldOut = split.heldOut;
  }

  /** The pooled index (built or loaded on first use). */
  pooledIndex(): { index: Bm25Index; info: PoolInfo } {
    return this.pool();
  }

  /** Candidate actions for an action-choosing policy (see qaCandidates). */
  candidates(state: SearchState): QaCandidates {
    return qaCandidates(
      state.prompt,
      state.steps.map((s) => ({ thought: '', action: s.action, observation: s.observation })),
    );
  }
}

function qaTool(options: QaEnvOptions, pool: () => { index: Bm25Index }): SearchTool {
  switch (options.retrieval) {
    case 'url': {
      if (!options.retrieverUrl) throw new RangeError('retrieval "url" needs a retriever URL (env.retrieverUrl), e.g. http://127.0.0.1:8000');
      return new RetrieverClient({ url: options.retrieverUrl, timeoutMs: options.retrieverTimeoutMs });
    }
    case 'pooled': {
      // Built (or loaded) now, not at the first search, so its cost is paid before rollouts start.
      const { index } = pool();
      return { name: 'bm25-pooled', search: (query, { k }) => index.search(query, k) };
    }
    case 'per-question': {
      const own = new Map<string, Bm25Index>();
      return {
        name: 'bm25-per-question',
        search(query, { prompt, k }) {
          const paragraphs = prompt.meta?.paragraphs as Passage[] | undefined;
          if (!paragraphs || paragraphs.length === 0) return pool().index.search(query, k);
          let index = own.get(prompt.id);
          if (!index) own.set(prompt.id, (index = new Bm25Index(paragraphs)));
          return index.search(query, k);
        },
      };
    }
  }
}
