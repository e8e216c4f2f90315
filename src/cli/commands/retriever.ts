import type { Command } from 'commander';
import { Bm25Index } from '../../env/search/bm25.ts';
import { pooledPassages } from '../../env/search/corpus.ts';
import { DATASET_FILES, DatasetError, loadDataset, type DatasetFormat } from '../../env/qa/datasets.ts';
import { DEFAULT_RETRIEVER_LIMITS, loadCorpus, serveRetriever } from '../../env/search/retriever-server.ts';
import type { Passage } from '../../env/search/search-r1.ts';
import { parseInteger, parsePort, UsageError } from '../io.ts';
import { serveUntilSignal } from '../until-signal.ts';

/**
 * `trace-rl retriever serve --corpus FILE --port P`: a Search-R1-compatible POST /retrieve service
 * (BM25) over a JSONL corpus (`{"id","contents"}` or `{"title","text"}` lines), or over the pooled
 * paragraphs of a bundled dataset (`--dataset hotpotqa`). Runs until interrupted.
 */
export function register(program: Command): void {
  const retriever = program.command('retriever').description('Search-R1-compatible retrieval service');
  retriever
    .command('serve')
    .description('serve POST /retrieve {queries, topk, return_scores} from a local corpus')
    .option('--corpus <file>', 'JSONL corpus: {"id","contents":"\\"Title\\"\\nText"} or {"title","text"} per line')
    .option(
      '--dataset <name>',
      `serve the pooled paragraphs of a bundled dataset: ${Object.keys(DATASET_FILES)
        .filter((d) => d !== 'bamboogle')
        .join(', ')}`,
    )
    .option('--data-dir <dir>', 'where the bundled datasets are (default: the repository data/ folder)')
    .option('--port <n>', 'port (0 = any free port)', '8000')
    .option('--host <host>', 'interface to listen on', '127.0.0.1')
    .option('--topk <k>', 'documents per query when a request gives no topk', '3')
    .option('--max-body-bytes <n>', 'largest request body (413 above it)', String(DEFAULT_RETRIEVER_LIMITS.maxBodyBytes))
    .option('--max-queries <n>', 'most queries in one request (413 above it)', String(DEFAULT_RETRIEVER_LIMITS.maxQueries))
    .option('--max-query-terms <n>', 'most search terms in one query, stop words not counted (413 above it)', String(DEFAULT_RETRIEVER_LIMITS.maxQueryTerms))
    .action(
      async (opts: {
        corpus?: string;
        dataset?: string;
        dataDir?: string;
        port: string;
        host: string;
        topk: string;
        maxBodyBytes: string;
        maxQueries: string;
        maxQueryTerms: string;
      }) => {
        const port = parsePort('--port', opts.port);
        const topk = parseInteger('--topk', opts.topk, { min: 1, max: 1000 });
        const limits = {
          maxBodyBytes: parseInteger('--max-body-bytes', opts.maxBodyBytes, { min: 1 }),
          maxQueries: parseInteger('--max-queries', opts.maxQueries, { min: 1 }),
          maxQueryTerms: parseInteger('--max-query-terms', opts.maxQueryTerms, { min: 1 }),
        };
        if (!opts.corpus === !opts.dataset) throw new UsageError('give exactly one of --corpus FILE or --dataset NAME');
        const passages = readPassages(opts);
        const server = await serveRetriever(new Bm25Index(passages), { port, host: opts.host, defaultTopk: topk, limits });
        process.stderr.write(`trace-rl retriever: ${passages.length} passages at ${server.url}/retrieve\n`);
        await serveUntilSignal(server, 'trace-rl retriever');
      },
    );
}

function readPassages(opts: { corpus?: string; dataset?: string; dataDir?: string }): Passage[] {
  try {
    if (opts.corpus) return loadCorpus(opts.corpus);
    const name = opts.dataset!;
    if (!(name in DATASET_FILES) || name === 'bamboogle')
      throw new UsageError(`--dataset: "${name}" has no paragraphs to serve; use hotpotqa, 2wikimultihopqa or musique`);
    return pooledPassages(loadDataset(name as DatasetFormat, { dataDir: opts.dataDir }).examples);
  } catch (e) {
    if (e instanceof DatasetError) throw new UsageError(e.message);
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new UsageError(`cannot read ${(e as NodeJS.ErrnoException).path}: no such file`);
    throw e;
  }
}
