/**
 * A server environment's sessions as the remote environment uses them, whatever the protocol: open
 * one, reset it with a task's parameters, step it with an action's text, close it. Every answer is
 * bounded in size and time by `RemoteLimits`; a transport failure (refused connection, dropped socket,
 * timeout) is a SessionLost, which the environment answers by reconnecting, while a server's own
 * refusal is a RemoteServerError.
 */
import type { ForkOffer } from './fork.ts';
import type { RemoteReply } from './reply.ts';

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
}

/** The connection failed or dropped (not the server's verdict): worth a new session. */
export class SessionLost extends Error {
  override name = 'SessionLost';
}

/** The server refused a session because it holds as many as it allows (OpenEnv's CAPACITY_REACHED). */
export function isCapacityRefusal(e: unknown): boolean {
  return (e as { code?: unknown } | null)?.code === 'CAPACITY_REACHED';
}
