/**
 * A server environment's sessions as the remote environment uses them, whatever the protocol: open
 * one, reset it with a task's parameters, step it with an action's text, close it. Every answer is
 * bounded in size and time by `RemoteLimits`; a transport failure (refused connection, dropped socket,
 * timeout) is a SessionLost, which the environment answers by reconnecting, while a server's own
 * refusal is a RemoteServerError.
 */
import { sleep } from '../../util/sleep.ts';
import type { ForkOffer } from './fork.ts';
import { RemoteServerError, type RemoteReply } from './reply.ts';

export interface RemoteSession {
  reset(params: Record<string, unknown>, signal?: AbortSignal): Promise<RemoteReply>;
  /** `keep`: ask a forkable server to keep the state this step reaches (its key comes back as reply.kept). */
  step(action: string, signal?: AbortSignal, keep?: boolean): Promise<RemoteReply>;
  /** Starts this (fresh) session from a state the server kept (fork.ts); answers that turn's reply. */
  fork(key: string, signal?: AbortSignal): Promise<RemoteReply>;
  /** Ends the session on the server (best effort, bounded in time); never throws. */
  close(): Promise<void>;
}

export interface RemoteServer {
  /** The protocol's name, for messages. */
  readonly protocol: 'openenv' | 'agentgym';
  /** The server's base URL, for messages. */
  readonly url: string;
  open(signal?: AbortSignal): Promise<RemoteSession>;
  /** GET /fork: the server's fork offer, or undefined when it makes none (fork.ts). */
  forkOffer(signal?: AbortSignal): Promise<ForkOffer | undefined>;
}

export interface RemoteLimits {
  /** Longest wait for one answer (and for a connection), milliseconds. */
  timeoutMs: number;
  /** Largest answer accepted, bytes (WebSocket maxPayload, HTTP body limit). */
  maxReplyBytes: number;
  /** Sent as `Authorization: Bearer <token>` on every request and upgrade (env.tokenFile). */
  token?: string;
}

/** The request headers that carry the limits' token, if any. */
export function authHeaders(limits: RemoteLimits): Record<string, string> {
  return limits.token === undefined ? {} : { authorization: `Bearer ${limits.token}` };
}

/** The connection failed or dropped (not the server's verdict): worth a new session. */
export class SessionLost extends Error {
  override name = 'SessionLost';
}

/**
 * The server did not answer within env.timeoutMs (it hangs, or drips its answer). Not a lost
 * connection: a new session would hang the same way, so nothing retries it (neither a reconnect nor
 * the engine's retries); the trajectory fails at once, within one timeout of its step.
 */
export class ServerTimedOut extends RemoteServerError {
  override name = 'ServerTimedOut';
  /** Read by the engine's retries (src/rollout/retried-calls.ts): a tool error not worth another attempt. */
  readonly retryable = false;
}

/**
 * The server refused a session because it holds as many as it allows: OpenEnv's CAPACITY_REACHED, in
 * its error frame or in an HTTP error's body (`trace-rl env serve --protocol agentgym` answers a
 * /create past its cap with HTTP 503 and that code; AgentGym's own servers have no cap). Any other
 * 503 is a server's failure, not a full server.
 */
export function isCapacityRefusal(e: unknown): boolean {
  return (e as { code?: unknown } | null)?.code === 'CAPACITY_REACHED';
}

/**
 * Waiting out a full server (docs/environments.md: "a refusal is waited out"): the waits double from
 * firstMs up to 5 s, for at most 10 × env.timeoutMs in all (5 minutes by default), time for a server
 * to close sessions a killed run left open (`trace-rl env serve --session-timeout`, OpenEnv's
 * session_timeout). `next` sleeps and says whether to try again.
 */
export class CapacityWait {
  private readonly deadline: number;
  private delay: number;

  constructor(
    readonly timeoutMs: number,
    firstMs = 250,
  ) {
    this.deadline = performance.now() + 10 * timeoutMs;
    this.delay = firstMs;
  }

  async next(signal?: AbortSignal): Promise<boolean> {
    const left = this.deadline - performance.now();
    if (left <= 0) return false;
    await sleep(Math.min(this.delay, left), signal);
    this.delay = Math.min(this.delay * 2, 5_000);
    return true;
  }

  /** How long a full server is waited for, in words, for messages. */
  get bound(): string {
    return `${Math.round((10 * this.timeoutMs) / 1000)} s (10 × env.timeoutMs)`;
  }
}
