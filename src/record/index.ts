/**
 * What a stored step means, below everything that writes or reads it (train writes it; store keeps
 * it; report and export read it): the metric keys, the step details' schema and the per-tree record.
 */
export * from './metrics.ts';
export * from './step-details.ts';
export * from './setup-refusals.ts';
export * from './tree-record.ts';
