/**
 * The shared success predictor Ṽ(H) (TRACE-SPEC §2–4): prefix features (hashed text + structure,
 * optional embeddings), the jax-js network trained online on bottom-up tree targets, baselines
 * (per-prompt Beta-Bernoulli, global rate), the per-prompt posterior over the shared prediction, and calibration metrics. No I/O except the optional
 * embeddings client.
 */
export * from './types.ts';
export * from './feature-matrix.ts';
export * from './features.ts';
export * from './embeddings.ts';
export { STRUCTURE_FEATURES } from './structure-features.ts';
export { fnv1a, hashToken, namespaceSeed } from './hash.ts';
export * from './mlp-predictor.ts';
export * from './errors.ts';
export * from './baselines.ts';
export * from './posterior.ts';
export { predictorKinds, type PredictorKind, type PredictorSettings } from './registry.ts';
export * from './calibration.ts';
export { SnapshotError } from './snapshot.ts';
