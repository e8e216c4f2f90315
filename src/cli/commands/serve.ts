import type { Command } from 'commander';
import { basename, resolve } from 'node:path';
import { DEFAULT_TINKER_LIMITS, type TinkerLimits } from '../../tinylm/tinker-server/limits.ts';
import { parseInteger, parsePort, UsageError } from '../io.ts';
import { serveUntilSignal } from '../until-signal.ts';

/**
 * `trace-rl serve --model FILE.gguf --port P`: an OpenAI-compatible server (chat and completions,
 * with per-token logprobs) in front of llama.cpp (node-llama-cpp, CPU). Any GGUF works: the tiny LM
 * this project trains or a model you have (for example a small Qwen). Runs until interrupted.
 */
export function register(program: Command): void {
  program
    .command('serve')
    .description('OpenAI-compatible /v1/completions and /v1/chat/completions (with logprobs) for a GGUF model, served by llama.cpp on the CPU')
    .requiredOption('--model <file>', 'GGUF model file')
    .option('--port <n>', 'port (0 = any free port)', '8080')
    .option('--host <host>', 'interface to listen on', '127.0.0.1')
    .option('--parallel <n>', 'requests generated at once (KV-cache sequences)', '2')
    .option('--threads <n>', 'CPU threads per evaluation (1 is fastest for tiny models on 2 cores)', '1')
    .option('--context <n>', 'tokens per sequence (default: the model’s context length)')
    .option('--name <id>', 'model id reported by /v1/models (default: the file name)')
    .option('--allow-reload', 'accept POST /reload {"model": FILE} to swap in new weights (an external trainer’s GGUF); it needs the control token')
    .option(
      '--control-token-file <file>',
      'with --allow-reload: POST /reload must send this file’s first line as Authorization: Bearer (default: a new token, printed once at start)',
    )
    .option(
      '--allow-host <name>',
      'with --allow-reload: also accept this Host name for /reload besides loopback and --host (repeat)',
      (v: string, p: string[] = []) => [...p, v],
    )
    .option(
      '--tinker',
      'also serve the Tinker training API (/api/v1: sampling, forward_backward, optim_step, weights) on the tiny LM: llama.cpp samples, jax-js trains (a GGUF this project wrote)',
    )
    .option('--tinker-key-file <file>', 'the Tinker API key clients must send as X-API-Key (its first line); default: a new key, printed once at start')
    .option('--tinker-temperature <t>', 'the sampling temperature the trainer’s log π uses (the client’s policy.temperature)', '1')
    .option(
      '--tinker-state-dir <dir>',
      'keep saved weights and training states in this folder (with an index), so a restarted server still loads them (--resume); default: a temporary folder removed at exit',
    )
    .option('--tinker-max-models <n>', 'trainable models open at once (429 above it)', String(DEFAULT_TINKER_LIMITS.models))
    .option('--tinker-max-pending-datums <n>', 'datums one model holds between optim_steps (429 above it)', String(DEFAULT_TINKER_LIMITS.pendingDatums))
    .option('--tinker-max-futures <n>', 'results not yet retrieved (429 above it)', String(DEFAULT_TINKER_LIMITS.futures))
    .option(
      '--tinker-max-samplers <n>',
      'llama.cpp engines loaded for sampling, the base model’s included (429 when all are busy)',
      String(DEFAULT_TINKER_LIMITS.samplers),
    )
    .option(
      '--tinker-keep-saves <n>',
      'saves kept per model and kind (sampler weights, training states); older ones are deleted',
      String(DEFAULT_TINKER_LIMITS.savesPerModel),
    )
    .option(
      '--tinker-max-saves <n>',
      'saves kept on the server, every model and kind together; an unloaded model’s go first (507 when every kept save belongs to a loaded model)',
      String(DEFAULT_TINKER_LIMITS.saves),
    )
    .option(
      '--tinker-max-call-tokens <n>',
      'tokens one forward_backward carries (413 above it) and one model holds for its next optim_step (429 above it)',
      String(DEFAULT_TINKER_LIMITS.callTokens),
    )
    .option(
      '--max-decoded-bytes <n>',
      'largest Tinker forward_backward body after zstd decompression (413 above it)',
      String(DEFAULT_TINKER_LIMITS.decodedBytes),
    )
    .option('--max-body-bytes <n>', 'largest request body (413 above it)', String(1 << 20))
    .option('--max-prompt-chars <n>', 'most prompt characters, checked before tokenising; chat: all messages together (413 above it)', '65536')
    .option('--max-prompt-tokens <n>', 'most prompt tokens after tokenising (413 above it; default and ceiling: the context length)')
    .option(
      '--max-connections <n>',
      'most open connections, idle keep-alive ones included; one past it replaces the oldest without a whole request in flight (closed at once when all have one)',
      String(DEFAULT_SERVE_CONNECTIONS),
    )
    .action(
      async (opts: {
        model: string;
        port: string;
        host: string;
        parallel: string;
        threads: string;
        context?: string;
        name?: string;
        maxBodyBytes: string;
        maxPromptChars: string;
        maxPromptTokens?: string;
        maxConnections: string;
        allowReload?: boolean;
        controlTokenFile?: string;
        allowHost?: string[];
        tinker?: boolean;
        tinkerKeyFile?: string;
        tinkerTemperature: string;
        tinkerStateDir?: string;
        tinkerMaxModels: string;
        tinkerMaxPendingDatums: string;
        tinkerMaxFutures: string;
        tinkerMaxSamplers: string;
        tinkerKeepSaves: string;
        tinkerMaxSaves: string;
        tinkerMaxCallTokens: string;
        maxDecodedBytes: string;
      }) => {
        const port = parsePort('--port', opts.port);
        const sequences = parseInteger('--parallel', opts.parallel, { min: 1, max: 64 });
        const threads = parseInteger('--threads', opts.threads, { min: 1, max: 256 });
        const contextSize = opts.context === undefined ? undefined : parseInteger('--context', opts.context, { min: 16 });
        const limits = {
          maxBodyBytes: parseInteger('--max-body-bytes', opts.maxBodyBytes, { min: 1 }),
          maxPromptChars: parseInteger('--max-prompt-chars', opts.maxPromptChars, { min: 1 }),
          maxPromptTokens: opts.maxPromptTokens === undefined ? undefined : parseInteger('--max-prompt-tokens', opts.maxPromptTokens, { min: 1 }),
        };
        const maxConnections = parseInteger('--max-connections', opts.maxConnections, { min: 1, max: 1_000_000 });
        const file = resolve(opts.model);
        const { checkGgufFile, GgufFileError } = await import('../../tinylm/gguf-file.ts');
        try {
          checkGgufFile(file);
        } catch (e) {
          if (e instanceof GgufFileError) throw new UsageError(`--model ${opts.model}: ${e.message}`);
          throw e;
        }
        const { LlamaEngine, serveOpenAI } = await import('../../tinylm/index.ts');
        const { reloadModel } = await import('../../tinylm/reload-model.ts');
        let engine;
        try {
          engine = await LlamaEngine.load(file, { sequences, threads, contextSize });
        } catch (e) {
          throw new UsageError(`--model ${opts.model}: llama.cpp could not load it (${String((e as Error).message).split('\n')[0]}); give a GGUF model file`);
        }
        const name = opts.name ?? basename(file).replace(/\.gguf$/i, '');
        const reload = opts.allowReload ? (f: string) => reloadModel(f, () => LlamaEngine.load(resolve(f), { sequences, threads, contextSize })) : undefined;
        const { controlToken } = await import('../../http/index.ts');
        const control = reload ? controlToken(opts.controlTokenFile === undefined ? undefined : resolve(opts.controlTokenFile)) : undefined;
        const tinker = opts.tinker
          ? await tinkerBackend(file, opts, (f) => LlamaEngine.load(resolve(f), { sequences, threads, contextSize })).catch(async (e: unknown) => {
              await engine.dispose();
              throw e;
            })
          : undefined;
        let server;
        try {
          server = await serveOpenAI(engine, {
            modelName: name,
            port,
            host: opts.host,
            clock: () => Date.now() / 1000,
            limits,
            maxConnections,
            onConnectionDropped: dropNotice(maxConnections),
            ...(reload && control ? { reload, control: { token: control.token, boundHost: opts.host, hosts: opts.allowHost ?? [] } } : {}),
            ...(tinker ? { tinker: tinker.options } : {}),
          });
        } catch (e) {
          await engine.dispose();
          tinker?.cleanup();
          throw e;
        }
        process.stderr.write(
          `trace-rl serve: ${name} at ${server.url}/v1 (completions, chat/completions, models; /tokenize, /detokenize${reload ? ', /reload' : ''}${tinker ? `; Tinker API at ${server.url}/api/v1` : ''})\n`,
        );
        if (control?.generated)
          process.stderr.write(`trace-rl serve: control token for POST ${server.url}/reload (send as Authorization: Bearer <token>): ${control.token}\n`);
        if (tinker?.generatedKey)
          process.stderr.write(`trace-rl serve: Tinker API key (send as X-API-Key; TINKER_API_KEY for train --policy tinker): ${tinker.generatedKey}\n`);
        try {
          await serveUntilSignal(server, 'trace-rl serve');
        } finally {
          await engine.dispose();
          tinker?.cleanup();
        }
      },
    );
}

/**
 * Open connections `serve` takes by default: far more than its generation slots (--parallel ≤ 64)
 * and any rollout's request concurrency need, and far fewer than a default file-descriptor limit
 * (1,024), so a client that opens sockets and never sends (or never closes them) cannot exhaust it.
 */
export const DEFAULT_SERVE_CONNECTIONS = 256;

/** One stderr line when connections start being refused, then at most one a minute with the count. */
function dropNotice(max: number): () => void {
  let dropped = 0;
  let said = -Infinity;
  return () => {
    dropped++;
    const now = Date.now();
    if (now - said < 60_000) return;
    said = now;
    process.stderr.write(
      `trace-rl serve: ${max} connections are open, each with a request in flight (--max-connections); closing new ones (${dropped} so far): a client opening more than it uses, or raise --max-connections\n`,
    );
  };
}

/** The Tinker backend's settings: the trainer's starting model (the served GGUF), a key, a folder for saved weights, its limits. */
async function tinkerBackend(
  file: string,
  opts: {
    model: string;
    tinkerKeyFile?: string;
    tinkerTemperature: string;
    tinkerStateDir?: string;
    tinkerMaxModels: string;
    tinkerMaxPendingDatums: string;
    tinkerMaxFutures: string;
    tinkerMaxSamplers: string;
    tinkerKeepSaves: string;
    tinkerMaxSaves: string;
    tinkerMaxCallTokens: string;
    maxDecodedBytes: string;
  },
  load: (file: string) => Promise<import('../../tinylm/llama-engine.ts').LlamaEngine>,
) {
  const limits: TinkerLimits = {
    models: parseInteger('--tinker-max-models', opts.tinkerMaxModels, { min: 1, max: 10_000 }),
    pendingDatums: parseInteger('--tinker-max-pending-datums', opts.tinkerMaxPendingDatums, { min: 1 }),
    futures: parseInteger('--tinker-max-futures', opts.tinkerMaxFutures, { min: 1 }),
    samplers: parseInteger('--tinker-max-samplers', opts.tinkerMaxSamplers, { min: 1, max: 256 }),
    savesPerModel: parseInteger('--tinker-keep-saves', opts.tinkerKeepSaves, { min: 1, max: 10_000 }),
    saves: parseInteger('--tinker-max-saves', opts.tinkerMaxSaves, { min: 1, max: 100_000 }),
    callTokens: parseInteger('--tinker-max-call-tokens', opts.tinkerMaxCallTokens, { min: 1 }),
    decodedBytes: parseInteger('--max-decoded-bytes', opts.maxDecodedBytes, { min: 1 }),
  };
  const { readFileSync, mkdtempSync, rmSync, mkdirSync, accessSync, constants } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { randomBytes } = await import('node:crypto');
  const { modelFromGguf } = await import('../../tinylm/model.ts');
  const { initJax } = await import('../../util/jax.ts');
  const { resolveApiKey } = await import('../../policy/openai/api-key.ts');
  const temperature = Number(opts.tinkerTemperature);
  if (!(temperature > 0 && temperature <= 4)) throw new UsageError(`--tinker-temperature ${opts.tinkerTemperature}: a number in (0, 4]`);
  let model;
  try {
    model = modelFromGguf(new Uint8Array(readFileSync(file)), file);
  } catch (e) {
    throw new UsageError(`--tinker trains the tiny LM: --model ${opts.model} must be a GGUF this project wrote (${(e as Error).message})`);
  }
  const fromFile = opts.tinkerKeyFile ? resolveApiKey({ file: opts.tinkerKeyFile, env: {} })!.key : undefined;
  // The official SDK refuses a key without its `tml-` prefix.
  const generatedKey = fromFile ? undefined : `tml-${randomBytes(24).toString('hex')}`;
  await initJax();
  const workDir = opts.tinkerStateDir ? resolve(opts.tinkerStateDir) : mkdtempSync(join(tmpdir(), 'trace-rl-tinker-'));
  if (opts.tinkerStateDir) {
    try {
      mkdirSync(workDir, { recursive: true });
      accessSync(workDir, constants.W_OK);
    } catch (e) {
      throw new UsageError(
        `--tinker-state-dir ${opts.tinkerStateDir}: not a folder this process can write (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
      );
    }
  }
  return {
    options: {
      model,
      workDir,
      keepSavesOfUnloaded: Boolean(opts.tinkerStateDir),
      apiKey: (fromFile ?? generatedKey)!,
      temperature,
      load,
      baseFile: file,
      limits,
    },
    generatedKey,
    cleanup: () => (opts.tinkerStateDir ? undefined : rmSync(workDir, { recursive: true, force: true })),
  };
}
