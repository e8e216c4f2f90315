/** The training loop: configuration, components, one TRACE step, the resumable run, metrics registry. */
export * from './config.ts';
export * from '../record/metrics.ts';
export * from './components.ts';
export { collect, learn, stepRecord, evaluate, shouldEvaluate, type StepContext, type Collected, type Learned, type StepTimes } from './step.ts';
export { drawPool } from './pool.ts';
export { initialState, type RunState } from './run-state.ts';
export { contrastMetrics, costMetrics } from './step-metrics.ts';
export { train, TrainError, type TrainOptions, type TrainOutcome, type LoopEvent, type ExternalTrainer } from './loop.ts';
export { configReference } from './config-docs.ts';
export { warmStart, warmStartHash, demonstrations, cloneDemonstrations, defaultCacheDir, type WarmStartKey, type WarmStartSettings } from './warm-start.ts';
export { buildEnvironment, type EnvironmentSetup } from './environments.ts';
