/**
 * Hand-off to external trainers (verl, TRL): one stored step's rollout trees → token-exact rows, one
 * per rewarded leaf (prompt ids, response ids covering model and observation tokens, a response mask,
 * rollout log-probabilities, per-token advantages from the chosen estimator, tree ids and predicted
 * success at each anchor), as Parquet or JSONL; and a de-duplicated prefix-trie form. The rollout
 * service that produces one batch per step for a live trainer is in src/service.
 * Columns and how to feed them in: docs/export.md.
 */
export { modelText, promptSegment, turnSegment, TokenizerMismatchError, type Segment } from './segments.ts';
export {
  buildBatch,
  prepareExport,
  logprobWarning,
  ExportError,
  EXPORT_FORMAT_VERSION,
  type ExportOptions,
  type LeafRow,
  type NodeTokens,
  type BatchMeta,
  type ExportBatch,
} from './rows.ts';
export { toTrlRow, type TrlRow } from './trl.ts';
export { trieRecords, type TrieRecord } from './trie.ts';
export { VERL_COLUMNS, TRL_COLUMNS, columnTable } from './columns.ts';
export { parquetChunks, type ColumnSpec, type ColumnType } from './parquet.ts';
export { EXPORT_FORMATS, isExportFormat, containerOf, serializeBatch, writeBatch, type ExportFormat } from './write.ts';
export { exportRun, type ExportRunOptions, type ExportRunResult } from './run-export.ts';
export { storedText, type StoredText } from './stored-step.ts';
export { ROLLOUT_NOTE, runTokenizer, type RolloutNote, type RunTokenizer } from './run-tokenizer.ts';
