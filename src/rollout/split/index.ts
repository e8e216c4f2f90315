/** A step split across worker processes by prompt (docs/rollout.md, Worker processes). */
export { pricedCaps, runSplitStep, type SplitOptions, type WorkerStats } from './split-step.ts';
export { splitRefusal, strategySplitRefusal, SplitRefused } from './refusal.ts';
export { StepWorkerPool, StepWorkerError, type WorkerPoolOptions } from './worker-pool.ts';
export { partitionPlan, type Share } from './partition.ts';
export { FrameTooLarge } from './frames.ts';
export { DEFAULT_MAX_MESSAGE_BYTES } from './protocol.ts';
export type { StepParts, StepPartsSpec, BuildStepParts } from './protocol.ts';
