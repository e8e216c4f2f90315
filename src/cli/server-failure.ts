/**
 * A server the command depends on failed (a policy server, a training engine, an environment server,
 * a retriever, a server tokenizer, the Atropos API): the one stderr line that names the server's call
 * (its URL and path are in the error's message), what went wrong, the fix, and what the run folder
 * keeps; exit code 1. Bugs are not server failures: an error of any other class keeps its stack trace.
 */
import { PolicyCallError } from '../policy/errors.ts';
import { ConnectionError, HttpStatusError } from '../policy/openai/http-errors.ts';
import { failureCauses, summariseFailures, type FailureSummary } from '../rollout/failures.ts';
import { RemoteProtocolError, RemoteServerError } from '../env/remote/reply.ts';
import { SessionLost } from '../env/remote/session.ts';
import { RetrieverError } from '../env/search/retriever-client.ts';
import { ServerTokenizerError } from '../tokens/server-tokenizer.ts';
import type { RolloutTree } from '../tree/types.ts';
import { RUN_DB, RunStore } from '../store/index.ts';
import { existsSync } from 'node:fs';
import { escapeControl } from '../util/escape-control.ts';
import { join } from 'node:path';

/** Every trajectory of a step failed after the engine's retries: the run ends before the step is stored. */
export class StepFailed extends Error {
  override name = 'StepFailed';
  constructor(
    readonly step: number,
    readonly failures: FailureSummary,
    /** The servers the failures point at (a timeout's message does not name one). */
    servers: readonly string[],
  ) {
    const where = servers.length ? ` at ${servers.join(', ')}` : '';
    super(`all ${failures.trajectories} trajectories of step ${step} ended in an error after the engine's retries${where} (${failureCauses(failures)})`);
  }
}

/** No trajectory of a step ran to an end (each reset or restore differed from the record): nothing to train on. */
export class StepTrainedNothing extends Error {
  override name = 'StepTrainedNothing';
  constructor(readonly step: number) {
    super(
      `no trajectory of step ${step} ran: every reset or restore was refused by the replay check (the environment answered a task's reset differently from its recorded first observation: a replay mismatch), so the step would train on nothing; the environment must answer a task's reset the same way each time (seed it through the task's parameters)`,
    );
  }
}

/**
 * A run's review hook (train's `review`): a step whose every trajectory failed throws StepFailed,
 * naming the configuration's servers (`config.policy`'s, or `config.env`'s when the tools failed); a
 * step with no trajectory at all throws StepTrainedNothing. A step where only some failed goes on, and
 * `warn` gets one line saying how many and why (train prints it even under --quiet: a stuck server
 * must not fail trajectories silently).
 */
export function failedStepRefusal(config: { policy: unknown; env: unknown }, warn?: (line: string) => void) {
  return ({ step, trees }: { step: number; trees: readonly RolloutTree[] }): void => {
    const failures = summariseFailures(trees);
    if (failures.trajectories === 0) throw new StepTrainedNothing(step);
    const env = serverEntry(config.env, ['url', 'retrieverUrl']);
    const policy = serverEntry(config.policy, ['baseUrl', 'baseUrls']);
    const servers = serverOfFailures(failures) === 'the environment server' ? env : policy;
    if (failures.failed === failures.trajectories) throw new StepFailed(step, failures, servers);
    if (failures.failed > 0 && warn) {
      const where = servers.length ? ` at ${servers.join(', ')}` : '';
      warn(
        `step ${step}: ${failures.failed} of ${failures.trajectories} trajectories ended in an error${where} and are not trained on (${escapeControl(failureCauses(failures))})`,
      );
    }
  };
}

/** The http(s) addresses among a settings object's fields. */
export function serverEntry(settings: unknown, fields: readonly string[]): string[] {
  const s = (settings ?? {}) as Record<string, unknown>;
  return fields.flatMap((f) => [s[f]].flat()).filter((v): v is string => typeof v === 'string' && /^https?:\/\//.test(v));
}

export interface ServerFailure {
  /** Which server, in words: `the engine`, `an environment server`, … */
  server: string;
  /** The error's first line, bounded: it names the call (URL and path) and the server's answer. */
  message: string;
  /** What to do about it. */
  fix: string;
}

/** Longest part of a server's message kept in the line (an error page can be anything). */
const MESSAGE_CHARS = 600;

/** The server failure `e` is, or undefined for anything else (a bug, a usage error). */
export function serverFailure(e: unknown): ServerFailure | undefined {
  const server = serverOf(e);
  if (server === undefined) return undefined;
  const raw = (e as Error).message.replace(/\s*\n\s*/g, ' ');
  // The message carries the server's own text: escaped, so it cannot drive the terminal.
  const message = escapeControl(raw.length > MESSAGE_CHARS ? `${raw.slice(0, MESSAGE_CHARS)}…` : raw);
  return { server, message, fix: fixFor(raw, server) };
}

/** Which server a step's failed trajectories point at: tool errors are the environment's, the rest the policy's. */
export function serverOfFailures(failures: FailureSummary): string {
  const codes = Object.keys(failures.byCode);
  return codes.length === 1 && codes[0] === 'tool_error' ? 'the environment server' : 'the policy server or engine';
}

/** Who failed, by the error's class (and, for a failed step, by what its trajectories failed on). */
function serverOf(e: unknown): string | undefined {
  if (e instanceof StepFailed) return serverOfFailures(e.failures);
  if (e instanceof StepTrainedNothing) return 'the environment server';
  if (e instanceof ServerTokenizerError) return 'the server tokenizer';
  if (e instanceof PolicyCallError) return /\/api\/v1\//.test(e.message) ? 'the engine' : 'the policy server';
  if (e instanceof HttpStatusError || e instanceof ConnectionError) return 'the policy server';
  if (e instanceof RemoteServerError || e instanceof RemoteProtocolError || e instanceof SessionLost) return 'the environment server';
  if (e instanceof RetrieverError) return 'the retriever';
  if (e instanceof Error && e.name === 'AtroposError') return 'the Atropos API';
  return undefined;
}

/** The fix, read from what the message says happened (an HTTP status, a refused connection, a timeout). */
export function fixFor(message: string, server: string): string {
  const status = Number(/\bHTTP (\d{3})\b/.exec(message)?.[1] ?? /^(\d{3}) /.exec(message)?.[1] ?? NaN);
  const settings =
    server === 'the environment server'
      ? 'env.url'
      : server === 'the Atropos API'
        ? '--atropos'
        : server === 'the retriever'
          ? 'env.retrieverUrl'
          : 'the server address: --base-url, policy.baseUrl(s)';
  if (status === 401 || status === 403) return 'the server refused the API key: check the key file or variable the command reads';
  if (status === 413)
    return 'the request was too large for the server: lower engine.maxTokensPerTurn, engine.maxTurns or policy.contextLength, or raise the server’s limit';
  if (status === 408 || /timeout|no answer in time|timed out|did not answer/i.test(message))
    return `the server did not answer in time: check that it is not overloaded or stuck, or allow more time (engine.timeoutMs${server === 'the environment server' ? ', env.timeoutMs' : ''})`;
  if (status >= 500 || status === 429) return `the server answered HTTP ${status} (an error on its side): check its log and that it is healthy`;
  if (status >= 400)
    return `the server refused the request: check what it names (${settings}, the model name) and that it speaks the protocol this run expects`;
  if (/ECONNREFUSED|ECONNRESET|connection failed|connect|socket|fetch failed|other side closed/i.test(message))
    return `the server could not be reached: check that it is running and the address is right (${settings})`;
  return `check the server (${settings}) and its log`;
}

/** `trace-rl <command>: <server> failed: <message>; <fix>; <kept>` (without a newline). */
export function serverFailureLine(command: string, f: ServerFailure, kept: string): string {
  return `trace-rl ${command}: ${f.server} failed: ${f.message}; ${f.fix}; ${kept}`;
}

/**
 * What a run folder keeps after a failure, and how to go on: its completed steps and the resume
 * command, or, when none was stored (a new run's folder is then removed), to run the command again.
 */
export function keptRunClause(out: string, resume: string): string {
  let last = -1;
  if (existsSync(join(out, RUN_DB))) {
    const store = RunStore.open(out, { readonly: true });
    try {
      last = store.lastStep();
    } finally {
      store.close();
    }
  }
  if (last < 0) return `no step was stored: run the same command again once the server is back`;
  return `step${last > 0 ? `s 0–${last} are` : ' 0 is'} kept in ${out}: continue with ${resume} once the server is back`;
}
