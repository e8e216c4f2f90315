import type { Command } from 'commander';
import { DEFAULT_FAULT_BODY_BYTES, SERVER_FAULT_KINDS, startFaultServer, upstreamBase, type ServerFaultKind } from '../../faults/index.ts';
import { parseDecimal, parseInteger, parsePort, UsageError } from '../io.ts';
import { serveUntilSignal } from '../until-signal.ts';

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
    .option(
      '--upstream <url>',
      'forward healthy requests to this OpenAI-compatible server: http://localhost:8000 or http://localhost:8000/v1 (a URL without a path gets /v1)',
    )
    .option('--seed <n>', 'seed of the fault draws', '0')
    .option('--port <n>', 'port (0 = any free port)', '8089')
    .option('--host <host>', 'interface to listen on', '127.0.0.1')
    .option('--max-body-bytes <n>', 'largest request body (413 above it)', String(DEFAULT_FAULT_BODY_BYTES))
    .action(async (opts: { rate: string; kinds: string; upstream?: string; seed: string; port: string; host: string; maxBodyBytes: string }) => {
      const rate = parseDecimal('--rate', opts.rate, { min: 0, max: 1 });
      const kinds = opts.kinds
        .split(',')
        .map((k) => k.trim())
        .filter(Boolean);
      const unknown = kinds.filter((k) => !(SERVER_FAULT_KINDS as readonly string[]).includes(k));
      if (unknown.length > 0 || kinds.length === 0)
        throw new UsageError(`--kinds: "${unknown.join(',') || opts.kinds}" is not a list of ${SERVER_FAULT_KINDS.join(', ')}`);
      const seed = parseInteger('--seed', opts.seed, { min: 0 });
      const port = parsePort('--port', opts.port);
      const maxBodyBytes = parseInteger('--max-body-bytes', opts.maxBodyBytes, { min: 1 });
      let upstream: string | undefined;
      if (opts.upstream !== undefined) {
        try {
          upstream = upstreamBase(opts.upstream);
        } catch {
          throw new UsageError(`--upstream "${opts.upstream}": not a URL; use e.g. http://localhost:8000/v1`);
        }
      }
      const onUpstreamError = (message: string) => process.stderr.write(`trace-rl faults: ${message}\n`);
      const server = await startFaultServer({ rate, kinds: kinds as ServerFaultKind[], seed, upstream, onUpstreamError, port, host: opts.host, maxBodyBytes });
      process.stderr.write(
        `trace-rl faults: ${server.url} fails ${rate * 100}% of requests (${kinds.join(', ')})${upstream ? `, forwards the rest to ${upstream}` : ''}\n`,
      );
      await serveUntilSignal(server, 'trace-rl faults');
      process.stdout.write(JSON.stringify({ requests: server.requests(), faults: server.counts }) + '\n');
    });
}
