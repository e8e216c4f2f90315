/**
 * Environments (TRACE-SPEC §8): the contract, exact QA rewards, the Search-R1 text protocol, BM25 and
 * HTTP retrieval, dataset loaders, the embedded multi-hop world, and a simulator with known success
 * probabilities.
 */
export * from './types.ts';
export * from './errors.ts';
export * from './qa-metrics.ts';
export * from './metrics.ts';
export * from './simulator.ts';
export * from './search-r1.ts';
export * from './bm25.ts';
export * from './search-env.ts';
export * from './world/index.ts';
export * from './datasets.ts';
export * from './corpus.ts';
export * from './retriever-client.ts';
export * from './retriever-server.ts';
export * from './qa/index.ts';
export * from './math/index.ts';
