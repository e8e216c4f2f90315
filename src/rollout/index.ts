/**
 * The rollout engine: turns an allocation into rollout trees. Multi-turn episodes (policy turn →
 * environment step → …) under a semaphore of requests in flight, every call reserved in the budget
 * ledger, failures stored on nodes, per-prompt prefix expansion as soon as that prompt's bare
 * rollouts finish, and record / replay of every response. See docs/rollout.md.
 */
export { runStep } from './engine.ts';
export { EngineError, type StepOptions, type StepResult, type Allocator, type StrategyRoots, type FixedRoots, type StepTape } from './step-options.ts';
export { BudgetTooSmall } from './step-budget.ts';
export { engineSettings, engineSettingsSchema, type EngineSettings, type EngineSettingsInput } from './settings.ts';
export { emptyProgress, type EngineEvent, type Progress } from './events.ts';
export { meanBareCost, priorRootCost, prefixCandidates, rootCandidates, knowsTruth, type Price, type Scorer } from './candidates.ts';
export { Recording, ReplayMissError, RecordingFormatError, ToolStepError, tapeEntrySchema, type TapeEntry, type StepRecord } from './recorder.ts';
export { Semaphore } from './semaphore.ts';
export { backoffDelay } from './backoff.ts';
export { searchR1Action, type ActionParser } from './trajectory.ts';
export { summariseFailures, failureCauses, type FailureSummary } from './failures.ts';
