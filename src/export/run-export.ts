import type { EstimatorName } from '../advantage/index.ts';
import type { Environment } from '../env/index.ts';
import { refuseRunFile, RunStore } from '../store/index.ts';
import { buildEnvironment, estimatorFromConfig, storedTrainConfig, type TrainConfig } from '../train/index.ts';
import type { RolloutTree } from '../tree/index.ts';
import type { ChatTemplate, Tokenizer } from '../tokens/index.ts';
import { buildBatch, ExportError, logprobWarning, prepareExport, type BatchMeta } from './rows.ts';
import { writeBatch, type ExportFormat } from './write.ts';
import type { Prompt } from '../tree/types.ts';

/**
 * The prompt text each tree's policy saw: the run's environment kind rebuilt from its stored settings
 * (the world is regenerated from its seed), rendering the prompt found by id in its train or test
 * split. Only the environment: rendering text needs no predictor, warm start or model.
 */
export function promptRenderer(config: Pick<TrainConfig, 'env' | 'engine'>): (tree: RolloutTree) => string {
  const { env, train, test } = buildEnvironment(config);
  return rendererFor(env, [...train, ...test]);
}

export function rendererFor(env: Environment<unknown>, prompts: readonly Prompt[]): (tree: RolloutTree) => string {
  const byId = new Map(prompts.map((p) => [p.id, p]));
  return (tree) => env.render(byId.get(tree.promptId) ?? { id: tree.promptId, question: tree.prompt, answers: [] });
}

export interface ExportRunOptions {
  /** A run folder (made by `trace-rl train` or `trace-rl rollout`). */
  dir: string;
  /** Step to export; default the last completed step. */
  step?: number;
  format: ExportFormat;
  out: string;
  /** Default: the run's configured estimator. */
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
  const store = RunStore.open(options.dir, { readonly: true });
  try {
    const config = storedTrainConfig(store);
    const last = store.lastStep();
    const step = options.step ?? last;
    if (last < 0) throw new ExportError(`${options.dir} has no completed step yet; export after the first step is stored`);
    if (!Number.isInteger(step) || step < 0 || step > last) throw new ExportError(`--step ${step}: ${options.dir} has steps 0–${last}; pick one of them`);
    const trees = store.trees(step);
    const render = promptRenderer(config);
    const text = { tokenizer: options.tokenizer, template: options.template, render };
    await prepareExport(trees, text);
    const batch = buildBatch(trees, { ...text, step, estimator: estimatorFromConfig({ ...config, estimator: options.estimator ?? config.estimator }), checkServerIds: options.checkServerIds });
    const container = writeBatch(batch, options.format, options.out);
    const warning = logprobWarning(batch);
    return { ...batch.meta, file: options.out, rows: batch.rows.length, container, ...(warning ? { warning } : {}) };
  } finally {
    store.close();
  }
}
