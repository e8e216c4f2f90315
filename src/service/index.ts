/**
 * Serving an external trainer (verl, TRL): the rollout service — train/loop.ts's loop with the
 * trainer as the learner, one batch file per step — and the weights gate it waits at until the
 * trainer has loaded new weights (a file, or an HTTP POST); or, instead of that wait, an Atropos
 * trajectory API that every step's groups are pushed to (docs/export.md, docs/atropos.md).
 */
export { WeightsGate, WeightsWaitAborted, weightsReadyFile, type WeightsGateOptions } from './weights-gate.ts';
export {
  runRolloutService,
  batchFile,
  batchMetaFile,
  RolloutStepFailed,
  type RolloutServiceOptions,
  type RolloutServiceResult,
  type RolloutServiceEvent,
} from './rollout-service.ts';
export { AtroposClient, AtroposError, type AtroposClientOptions, type AtroposPush, type AtroposRegistration } from './atropos-client.ts';
export { ATROPOS_LAYOUTS, atroposGroups, isAtroposLayout, powerOfTwoParts, type AtroposLayout, type ScoredGroup } from './atropos-groups.ts';
