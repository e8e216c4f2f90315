import type { Command } from 'commander';
import { isEstimatorName, ESTIMATOR_NAMES } from '../../advantage/index.ts';
import { EXPORT_FORMATS, ExportError, exportRun, isExportFormat, TokenizerError, tokenizerByName, TokenizerMismatchError } from '../../export/index.ts';
import { RunStoreError } from '../../store/index.ts';
import { parseInteger, UsageError, writeJson } from '../io.ts';

/** Module errors that are the user's to fix: one stderr line, exit 2. */
export function asUsage(e: unknown): unknown {
  const usage = e instanceof ExportError || e instanceof TokenizerError || e instanceof TokenizerMismatchError || e instanceof RunStoreError;
  return usage ? new UsageError(e.message) : e;
}

/** `trace-rl export RUN_DIR --step N --format verl|trl|jsonl|trie --out FILE`: one step's trees → trainer rows. */
export function register(program: Command): void {
  program
    .command('export')
    .description('write one stored step as token-exact training rows for verl or TRL (Parquet or JSONL), or as a prefix trie; see docs/export.md')
    .argument('<run-dir>', 'run folder (made by trace-rl train or trace-rl rollout)')
    .option('--step <n>', 'step to export (default: the last completed step)')
    .requiredOption('--format <form>', `row form: ${EXPORT_FORMATS.join(', ')} (verl/trl write Parquet unless --out ends in .jsonl)`)
    .requiredOption('--out <file>', 'file to write')
    .option('--estimator <name>', `advantage estimator (default: the run's): ${ESTIMATOR_NAMES.join(', ')}`)
    .option('--tokenizer <name>', 'tokenizer for text without server ids: bytes (id = UTF-8 byte + 3) or codepoints', 'bytes')
    .option('--no-check-server-ids', 'keep server token ids even when they do not decode to the turn text with --tokenizer')
    .action(async (dir: string, opts: { step?: string; format: string; out: string; estimator?: string; tokenizer: string; checkServerIds: boolean }) => {
      if (!isExportFormat(opts.format)) throw new UsageError(`--format ${opts.format}: choose one of ${EXPORT_FORMATS.join(', ')}`);
      if (opts.estimator !== undefined && !isEstimatorName(opts.estimator)) throw new UsageError(`--estimator ${opts.estimator}: choose one of ${ESTIMATOR_NAMES.join(', ')}`);
      let step: number | undefined;
      if (opts.step !== undefined) {
        step = parseInteger('--step', opts.step, { min: 0 });
      }
      try {
        const tokenizer = tokenizerByName(opts.tokenizer);
        const result = await exportRun({ dir, step, format: opts.format, out: opts.out, estimator: opts.estimator as never, tokenizer, checkServerIds: opts.checkServerIds });
        writeJson(result);
      } catch (e) {
        throw asUsage(e);
      }
    });
}
