import type { Command } from 'commander';
import { ServedEnv } from '../../env/remote/serve/served-env.ts';
import { serveEnvironment } from '../../env/remote/serve/servers.ts';
import { buildEnvironment, parseTrainConfig } from '../../train/index.ts';
import { applySetPairs } from '../config-file.ts';
import { parseInteger, parsePort, UsageError } from '../io.ts';
import { serveUntilSignal } from '../until-signal.ts';
import { controlToken } from '../../http/control.ts';

/**
 * `trace-rl env serve --kind world --protocol openenv|agentgym --port P`: one of trace-rl's own
 * environment kinds as a server environment, so a run can reach it over the wire (env.kind openenv /
 * agentgym) and any other client of those protocols can use it. Its tasks are the kind's prompts, train
 * then test, by index (docs/environments.md, "Your environment as a server"). Runs until interrupted.
 */
export function register(program: Command): void {
  const env = program.command('env').description('environments as servers');
  env
    .command('serve')
    .description('serve an environment kind over the OpenEnv (WebSocket /ws) or AgentGym (HTTP) protocol')
    .option('--kind <kind>', 'the environment kind to serve (its settings: --set env.<field>=value)', 'world')
    .option('--protocol <protocol>', 'openenv or agentgym', 'openenv')
    .option('--set <path=value...>', 'a setting of the kind, e.g. --set env.questions=200')
    .option('--max-turns <n>', 'turn limit of an episode (the run’s engine.maxTurns)', '6')
    .option('--max-sessions <n>', 'most sessions open at once (OpenEnv’s max_concurrent_envs); one more is refused', '64')
    .option('--perturb', 'make the server not replay-deterministic on purpose: every step’s observation names its session')
    .option('--step-delay-ms <n>', 'wall time every step takes, ms (a latency-bound environment, for benchmarks)', '0')
    .option('--fork-keep <n>', 'offer the fork extension: keep at most n states for forks (oldest dropped first); 0 = no fork', '1024')
    .option('--fork-ttl-s <n>', 'seconds a state kept for forks lives', '600')
    .option('--port <n>', 'port (0 = any free port)', '8000')
    .option('--host <host>', 'interface to listen on', '127.0.0.1')
    .option('--max-body-bytes <n>', 'largest request body or WebSocket frame', String(1024 * 1024))
    .option(
      '--session-timeout <s>',
      'close a session unused for this many seconds (a client killed without closing its sessions does not keep the server full)',
      '600',
    )
    .option(
      '--token-file <file>',
      'require the token on this file’s first line (16+ characters) as Authorization: Bearer on every request (clients: env.tokenFile)',
    )
    .option('--allow-host <name...>', 'a Host name accepted besides the loopback ones and --host (a server behind a proxy or reached by name)')
    .action(
      async (opts: {
        kind: string;
        protocol: string;
        set?: string[];
        maxTurns: string;
        maxSessions: string;
        perturb?: boolean;
        stepDelayMs: string;
        forkKeep: string;
        forkTtlS: string;
        port: string;
        host: string;
        maxBodyBytes: string;
        sessionTimeout: string;
        tokenFile?: string;
        allowHost?: string[];
      }) => {
        if (opts.protocol !== 'openenv' && opts.protocol !== 'agentgym') throw new UsageError(`--protocol ${opts.protocol}: choose openenv or agentgym`);
        if (opts.kind === 'openenv' || opts.kind === 'agentgym')
          throw new UsageError(`--kind ${opts.kind}: that kind is a client of a server; serve an in-process kind (world, simulator, …)`);
        const port = parsePort('--port', opts.port);
        const maxTurns = parseInteger('--max-turns', opts.maxTurns, { min: 1, max: 1000 });
        const maxSessions = parseInteger('--max-sessions', opts.maxSessions, { min: 1, max: 100_000 });
        const maxBodyBytes = parseInteger('--max-body-bytes', opts.maxBodyBytes, { min: 1024 });
        const stepDelayMs = parseInteger('--step-delay-ms', opts.stepDelayMs, { min: 0, max: 600_000 });
        const forkKeep = parseInteger('--fork-keep', opts.forkKeep, { min: 0, max: 1_000_000 });
        const forkTtlS = parseInteger('--fork-ttl-s', opts.forkTtlS, { min: 1, max: 86_400 });
        const idleTimeoutMs = parseInteger('--session-timeout', opts.sessionTimeout, { min: 1, max: 7 * 24 * 3600 }) * 1000;
        const token = opts.tokenFile === undefined ? undefined : controlToken(opts.tokenFile).token;
        const raw: Record<string, unknown> = { env: { kind: opts.kind }, engine: { maxTurns } };
        applySetPairs(raw, opts.set ?? [], 'env.questions=200');
        const config = parseTrainConfig(raw);
        const setup = await buildEnvironment(config);
        const served = new ServedEnv(setup, config.env.kind, {
          maxSessions,
          idleTimeoutMs,
          ...(opts.perturb ? { perturb: true } : {}),
          ...(stepDelayMs > 0 ? { stepDelayMs } : {}),
          ...(forkKeep > 0 ? { fork: { maxKept: forkKeep, ttlS: forkTtlS } } : {}),
        });
        const access = { ...(token ? { token } : {}), hosts: opts.allowHost ?? [] };
        const server = await serveEnvironment(served, opts.protocol, { port, host: opts.host, maxBodyBytes, access });
        process.stderr.write(
          `trace-rl env serve: ${config.env.kind} over ${opts.protocol} at ${server.url}${opts.protocol === 'openenv' ? ' (sessions at /ws)' : ''}: tasks 0..${served.prompts.length - 1} (train ${setup.train.length}, then test ${setup.test.length})${forkKeep > 0 ? `; forks: at most ${forkKeep} states kept, ${forkTtlS} s each` : ''}\n`,
        );
        await serveUntilSignal(server, 'trace-rl env serve');
      },
    );
}
