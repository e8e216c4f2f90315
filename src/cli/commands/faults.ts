import type { Command } from 'commander';
import { SERVER_FAULT_KINDS, startFaultServer, type ServerFaultKind } from '../../faults/index.ts';
import { UsageError } from '../io.ts';

/**
 * `trace-rl faults serve --rate 0.2 [--upstream URL]`: an OpenAI-compatible server that fails a
 * fraction of requests (5xx, hang, closed connection, malformed / truncated JSON, broken tool call),
 * answering the rest from a scripted agent or by forwarding to a real server. Point a run's policy
 * at it to rehearse failure handling. Prints the fault counts when stopped (Ctrl-C).
 */
export function register(program: Command): void {
  const faults = program.command('faults').description('fault injection for rehearsing failures');
  faults
    .command('serve')
    .description('serve /v1/completions and /v1/chat/completions, failing a fraction of requests')
    .option('--rate <x>', 'fraction of requests that fail', '0.2')
    .option('--kinds <list>', `comma-separated fault kinds: ${SERVER_FAULT_KINDS.join(', ')}`, SERVER_FAULT_KINDS.join(','))
    .option('--upstream <url>', 'forward healthy requests to this OpenAI-compatible base URL (e.g. http://localhost:8000/v1)')
    .option('--seed <n>', 'seed of the fault draws', '0')
    .option('--port <n>', 'port (0 = any free port)', '8089')
    .option('--host <host>', 'interface to listen on', '127.0.0.1')
    .action(async (opts: { rate: string; kinds: string; upstream?: string; seed: string; port: string; host: string }) => {
      const rate = Number(opts.rate);
      if (!(rate >= 0 && rate <= 1)) throw new UsageError(`--rate: "${opts.rate}" must be a number in [0, 1]`);
      const kinds = opts.kinds.split(',').map((k) => k.trim()).filter(Boolean);
      const unknown = kinds.filter((k) => !(SERVER_FAULT_KINDS as readonly string[]).includes(k));
      if (unknown.length > 0 || kinds.length === 0) throw new UsageError(`--kinds: "${unknown.join(',') || opts.kinds}" is not a list of ${SERVER_FAULT_KINDS.join(', ')}`);
      const seed = Number(opts.seed);
      if (!Number.isInteger(seed) || seed < 0) throw new UsageError(`--seed: "${opts.seed}" must be a non-negative integer`);
      const port = Number(opts.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port: "${opts.port}" is not a port number`);
      const server = await startFaultServer({ rate, kinds: kinds as ServerFaultKind[], seed, upstream: opts.upstream, port, host: opts.host });
      process.stderr.write(`trace-rl faults: ${server.url} fails ${rate * 100}% of requests (${kinds.join(', ')})${opts.upstream ? `, forwards the rest to ${opts.upstream}` : ''}\n`);
      await new Promise<void>((resolve) => {
        const stop = () => void server.close().then(resolve);
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
      process.stdout.write(JSON.stringify({ requests: server.requests(), faults: server.counts }) + '\n');
    });
}
