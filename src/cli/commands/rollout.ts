import type { Command } from 'commander';
import { performance } from 'node:perf_hooks';
import { EXPORT_FORMATS, isExportFormat } from '../../export/index.ts';
import { runRolloutService, WeightsGate } from '../../service/index.ts';
import { buildPolicy, type PolicySettings } from '../../policy/registry.ts';
import { parseTrainConfig } from '../../train/index.ts';
import { policyFromFlags } from '../policy-flags.ts';
import { RunStore } from '../../store/index.ts';
import { parsePort, UsageError, writeJson } from '../io.ts';
import { addTokenizerOptions, asUsage, transcriptFromOptions } from './export.ts';
import { addConfigOptions, rawConfig } from './train.ts';

const collect = (value: string, previous: string[] = []) => [...previous, value];

/**
 * `trace-rl rollout --policy openai --base-url URL --steps N --out DIR`: the rollout service for an
 * external trainer. Prints one JSON line per event on stdout: `batch` (a batch file is ready),
 * `waiting` (which file to create, or which URL to POST, once new weights are loaded), `weights`,
 * and `done`.
 */
export function register(program: Command): void {
  const cmd = program
    .command('rollout')
    .description('serve TRACE rollouts to an external trainer (verl, TRL): one batch file per step, then wait for its new weights; see docs/export.md')
    .requiredOption('--policy <kind>', 'policy kind: openai (an OpenAI-compatible server: vLLM, SGLang, llama.cpp)')
    .option('--base-url <url>', 'server base URL such as http://localhost:8000/v1 (repeat for several servers)', collect)
    .option('--model <name>', 'model name sent to the server', 'default')
    .option('--mode <mode>', 'tokens (token ids in, token ids out: exact), completions (growing text prompt) or chat', 'completions')
    .option('--extras <kind>', 'vllm (ask for token ids) or none', 'none')
    .requiredOption('--out <dir>', 'run folder to create: run.sqlite, batches/step-N.*, weights-step-N.ready')
    .option('--format <form>', `batch form: ${EXPORT_FORMATS.join(', ')}`, 'verl')
    .option('--no-check-server-ids', 'keep server token ids even when --tokenizer does not reproduce the text')
    .option('--listen <port>', 'also accept POST /weights {"step": N} on this port (0 = any free port)')
    .option('--reload-url <url>', 'with --listen: a /weights body\'s "model" (new GGUF) is sent to this trace-rl serve --allow-reload (POST <url>/reload) before the next step');
  addTokenizerOptions(cmd);
  addConfigOptions(cmd).action(async (opts: Record<string, unknown>) => {
    if (opts.policy !== 'openai') throw new UsageError(`--policy ${String(opts.policy)}: only "openai" is supported (the embedded policy trains itself with trace-rl train)`);
    const format = String(opts.format);
    if (!isExportFormat(format)) throw new UsageError(`--format ${format}: choose one of ${EXPORT_FORMATS.join(', ')}`);
    const settings = policyFromFlags({ kind: 'openai', baseUrls: opts.baseUrl ?? [], model: opts.model, mode: opts.mode, extras: opts.extras }, { baseUrls: '--base-url', model: '--model', mode: '--mode', extras: '--extras' });
    let port: number | undefined;
    if (opts.listen !== undefined) {
      port = parsePort('--listen', opts.listen);
    }
    // Ids go straight to the model in token mode: the byte tokenizer's would be wrong for any real model.
    if (opts.mode === 'tokens' && opts.tokenizer === 'bytes') throw new UsageError('--mode tokens sends token ids to the model: give its tokenizer with --tokenizer hf:DIR, qwen3 or server');
    const transcript = await transcriptFromOptions(opts, (settings as PolicySettings<'openai'>).baseUrls[0]);
    // The run stores the server policy it rolled out with, like any run its policy.
    const config = parseTrainConfig({ ...rawConfig(opts), policy: settings });
    const out = String(opts.out);
    RunStore.checkNew(out);
    const { policy } = await buildPolicy(settings, { envKind: config.env.kind, concurrency: config.engine.concurrency, transcript });
    const reloadUrl = opts.reloadUrl === undefined ? undefined : String(opts.reloadUrl).replace(/\/+$/, '').replace(/\/v1$/, '');
    const reload = reloadUrl
      ? async (model: string) => {
          const res = await fetch(`${reloadUrl}/reload`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model }) });
          if (!res.ok) throw new Error(`${reloadUrl}/reload answered HTTP ${res.status}: ${await res.text()}`);
        }
      : undefined;
    const gate = new WeightsGate({ dir: out, port, ...(reload ? { reload } : {}) });
    const controller = new AbortController();
    const onSigint = () => controller.abort(new Error('interrupted'));
    process.on('SIGINT', onSigint);
    try {
      await gate.start();
      const result = await runRolloutService({
        out,
        config,
        policy,
        format,
        tokenizer: transcript.tokenizer,
        template: transcript.template,
        checkServerIds: opts.checkServerIds !== false,
        gate,
        clock: () => performance.now(),
        signal: controller.signal,
        onEvent: (e) => {
          if (e.kind === 'batch') writeJson({ event: 'batch', step: e.step, file: e.file, rows: e.rows, leaves: e.leaves });
          else if (e.kind === 'waiting') writeJson({ event: 'waiting', step: e.step, file: e.file, ...(e.url ? { url: e.url } : {}) });
          else if (e.kind === 'weights') writeJson({ event: 'weights', step: e.step });
        },
      });
      writeJson({ event: 'done', status: result.status, batches: result.batches.length, out });
    } catch (e) {
      throw asUsage(e);
    } finally {
      process.off('SIGINT', onSigint);
      await gate.close();
    }
  });
}
