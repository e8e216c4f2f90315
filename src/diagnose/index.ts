/**
 * `trace-rl diagnose`: where the outcome contrast lies before any training. For a few prompts, k
 * rollouts at the root and k continuations at every intermediate prefix of some bare rollouts; per
 * depth t the mean V_t(1 − V_t) (Proposition 2: the contrast still open after t turns), the share of
 * the root's outcome variance still open, the next decision's entropy, and what a continuation there
 * costs in trajectories, policy calls and tokens. Sampling runs on the rollout engine (one step with a
 * fixed allocation); the measure is pure (measure.ts).
 */
export { contrastEstimate, depthRows, treeSamples, type DepthRow, type PrefixSample } from './measure.ts';
export { diagnose, diagnosisAllocator, trajectoryBound, type DiagnoseOptions, type Diagnosis } from './run.ts';
export { diagnosisJson, formatDiagnosis, perTokenVsRoot, shareNote, type DiagnosisAbout } from './format.ts';
export { renderDiagnosisPage } from './page.ts';
