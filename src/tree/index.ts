/** Rollout trees: nodes, leaves, bottom-up targets, (de)serialisation. Pure data; no I/O. */
export * from './types.ts';
export * from './tree.ts';
export * from './serialize.ts';
