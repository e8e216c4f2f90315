import type { Command } from 'commander';
import { existsSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { UsageError } from '../io.ts';

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
    .option('--allow-reload', 'accept POST /reload {"model": FILE} to swap in new weights (an external trainer’s GGUF)')
    .action(async (opts: { model: string; port: string; host: string; parallel: string; threads: string; context?: string; name?: string; allowReload?: boolean }) => {
      const int = (flag: string, v: string, min: number, max = Number.MAX_SAFE_INTEGER) => {
        const n = Number(v);
        if (!Number.isInteger(n) || n < min || n > max) throw new UsageError(`${flag}: "${v}" must be a whole number in [${min}, ${max}]`);
        return n;
      };
      const port = int('--port', opts.port, 0, 65535);
      const sequences = int('--parallel', opts.parallel, 1, 64);
      const threads = int('--threads', opts.threads, 1, 256);
      const contextSize = opts.context === undefined ? undefined : int('--context', opts.context, 16);
      const file = resolve(opts.model);
      if (!existsSync(file)) throw new UsageError(`--model: ${opts.model}: no such file`);
      const { LlamaEngine, serveOpenAI } = await import('../../tinylm/index.ts');
      let engine;
      try {
        engine = await LlamaEngine.load(file, { sequences, threads, contextSize });
      } catch (e) {
        throw new UsageError(`--model: ${opts.model}: llama.cpp could not load it (${(e as Error).message})`);
      }
      const name = opts.name ?? basename(file).replace(/\.gguf$/i, '');
      const reload = opts.allowReload ? (f: string) => LlamaEngine.load(resolve(f), { sequences, threads, contextSize }) : undefined;
      const server = await serveOpenAI(engine, { modelName: name, port, host: opts.host, clock: () => Date.now() / 1000, ...(reload ? { reload } : {}) });
      process.stderr.write(`trace-rl serve: ${name} at ${server.url}/v1 (completions, chat/completions, models; /tokenize, /detokenize${reload ? ', /reload' : ''})\n`);
      await new Promise<void>((done) => {
        const stop = () => void server.close().then(() => engine.dispose()).then(done);
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
    });
}
