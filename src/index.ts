/**
 * trace-rl's library surface, one namespace per module (names stay unambiguous across modules):
 * `import { allocate, rollout } from 'trace-rl'`. Sources are TypeScript run through tsx (Node 20
 * cannot strip types), as the `trace-rl` command does.
 */
export * as tree from './tree/index.ts';
export * as budget from './budget/index.ts';
export * as allocate from './allocate/index.ts';
export * as advantage from './advantage/index.ts';
export * as predict from './predict/index.ts';
export * as env from './env/index.ts';
export * as policy from './policy/index.ts';
export * as rollout from './rollout/index.ts';
// The evaluation harness (runEval), training's held-out evaluation and greedyAccuracy / sampledAccuracy (once in rollout).
export * as evaluation from './eval/index.ts';
export * as train from './train/index.ts';
// Hand-off to external trainers (exportRun, buildBatch, writeBatch, …; docs/export.md) and the rollout service.
export * as exporting from './export/index.ts';
export * as service from './service/index.ts';
// Tokenizers and transcripts the batches are built with (loadTranscript, codepointTokenizer, …).
export * as tokens from './tokens/index.ts';
export * as store from './store/index.ts';
export * as report from './report/index.ts';
export * as diagnose from './diagnose/index.ts';
export { createRng, type Rng } from './util/rng.ts';
