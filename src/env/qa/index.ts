/** Real multi-hop QA: dataset sources and mixing, the seeded split, the cached pooled index, the environment, candidate spans. */
export * from './sources.ts';
export * from './split.ts';
export * from './pooled-index.ts';
export * from './qa-env.ts';
export * from './candidates.ts';
