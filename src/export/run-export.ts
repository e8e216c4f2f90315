import type { EstimatorName } from '../advantage/index.ts';
import { refuseForeignOutput, refuseRunFile, RunStore } from '../store/index.ts';
import { EXPORT_OUTPUT } from './own-output.ts';
import type { ChatTemplate, Tokenizer } from '../tokens/index.ts';
import { buildBatch, ExportError, logprobWarning, prepareExport, type BatchMeta } from './rows.ts';
import { storedText } from './stored-step.ts';
import { writeBatch, type ExportFormat } from './write.ts';

export interface ExportRunOptions {
  /** A run folder (made by `trace-rl train` or `trace-rl rollout`). */
  dir: string;
  /** Step to export; default the last completed step. */
  step?: number;
  format: ExportFormat;
  out: string;
  /** Default: the advantages the run stored (its configured estimator's); another name recomputes them. */
  estimator?: EstimatorName;
  tokenizer?: Tokenizer;
  template?: ChatTemplate;
  checkServerIds?: boolean;
}

export interface ExportRunResult extends BatchMeta {
  file: string;
  rows: number;
  container: 'parquet' | 'jsonl';
  /** Set when no row carries rollout log-probabilities (see logprobWarning). */
  warning?: string;
}

/** `trace-rl export` as a library call: one stored step's trees → one file. */
export async function exportRun(options: ExportRunOptions): Promise<ExportRunResult> {
  refuseRunFile(options.out, [options.dir]);
  refuseForeignOutput(options.out, EXPORT_OUTPUT);
  const store = RunStore.open(options.dir, { readonly: true });
  try {
    const last = store.lastStep();
    const step = options.step ?? last;
    if (last < 0) throw new ExportError(`${options.dir} has no completed step yet; export after the first step is stored`);
    if (!Number.isInteger(step) || step < 0 || step > last) throw new ExportError(`--step ${step}: ${options.dir} has steps 0–${last}; pick one of them`);
    const trees = store.trees(step);
    const { render, estimator } = storedText(trees, store.treeRecords(step), `${options.dir} step ${step}`, options.estimator);
    const text = { tokenizer: options.tokenizer, template: options.template, render };
    await prepareExport(trees, text);
    const batch = buildBatch(trees, { ...text, step, estimator, checkServerIds: options.checkServerIds });
    // Again just before writing: the batch took a while, and the file may have appeared meanwhile.
    refuseForeignOutput(options.out, EXPORT_OUTPUT);
    const container = await writeBatch(batch, options.format, options.out);
    const warning = logprobWarning(batch);
    return { ...batch.meta, file: options.out, rows: batch.rows.length, container, ...(warning ? { warning } : {}) };
  } finally {
    store.close();
  }
}
