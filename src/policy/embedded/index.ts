/** The embedded trainable policy: candidate actions, hashed features, a linear softmax scorer, PPO update. */
export { EmbeddedPolicy, PolicySnapshotError, type EmbeddedPolicyOptions, type UpdateOptions } from './embedded-policy.ts';
export { candidateActions, worldCandidateSource, type ActionCandidates, type CandidateSource } from './candidates.ts';
export { featureContext, featureNames, hashFeature } from './features.ts';
