/**
 * Environments (TRACE-SPEC §8): the contract, exact QA rewards, the Search-R1 text protocol, BM25 and
 * HTTP retrieval, dataset loaders, the embedded multi-hop world, and a simulator with known success
 * probabilities.
 */
export * from './types.ts';
export * from './errors.ts';
export * from './qa/qa-metrics.ts';
export * from './metrics.ts';
export * from './simulator/simulator.ts';
export * from './search/search-r1.ts';
export * from './search/bm25.ts';
export * from './search/search-env.ts';
export * from './world/index.ts';
export * from './qa/datasets.ts';
export * from './search/corpus.ts';
export * from './search/retriever-client.ts';
export * from './search/retriever-server.ts';
export * from './qa/index.ts';
export * from './math/index.ts';
