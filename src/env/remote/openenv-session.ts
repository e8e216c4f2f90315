/**
 * OpenEnv sessions over the `/ws` WebSocket (the `ws` library: Node 20 has no WebSocket client without
 * a flag, and `ws` bounds a frame by maxPayload before it is buffered). One request in flight per
 * session, answered by the next frame; every wait is bounded by the limits' timeout. Plus the HTTP
 * routes read once at build time: /health, /schema, /metadata.
 */
import type WebSocket from 'ws';
import type { ForkOffer } from './fork.ts';
import { parseForkOffer } from './fork.ts';
import { openEnvCloseMessage, openEnvAction, openEnvForkMessage, openEnvResetMessage, openEnvStepMessage, parseOpenEnvMessage } from './openenv-protocol.ts';
import { clipped, RemoteProtocolError, type RemoteReply } from './reply.ts';
import { authHeaders, ServerTimedOut, SessionLost, type RemoteLimits, type RemoteServer, type RemoteSession } from './session.ts';
import { getJson, HttpStatusError } from './http-json.ts';

export interface OpenEnvServerOptions extends RemoteLimits {
  /** Base URL, http(s)://host:port (the WebSocket is ws(s)://host:port/ws). */
  url: string;
  /** The action object's field a turn's text goes into (from /schema, see actionFieldFromSchema). */
  actionField: string;
  /** The observation's text field (observationText). */
  observationField?: string;
  /** The observation's field that lists candidate actions (e.g. `legal_actions`). */
  candidatesField?: string;
}

export class OpenEnvServer implements RemoteServer {
  readonly protocol = 'openenv' as const;
  readonly url: string;

  constructor(private readonly options: OpenEnvServerOptions) {
    this.url = options.url.replace(/\/+$/, '');
  }

  /** The WebSocket address of the sessions. */
  get wsUrl(): string {
    return `${this.url.replace(/^http/, 'ws')}/ws`;
  }

  /** GET a JSON route of the server (/health, /schema, /metadata), bounded like every answer. */
  get(path: string, signal?: AbortSignal): Promise<unknown> {
    return getJson(`${this.url}${path}`, this.options, `openenv server ${this.url}`, signal);
  }

  /** Any failure to read an offer means none: replay works with every server. */
  async forkOffer(signal?: AbortSignal): Promise<ForkOffer | undefined> {
    return parseForkOffer(await this.get('/fork', signal).catch(() => undefined));
  }

  async open(signal?: AbortSignal): Promise<RemoteSession> {
    const where = `openenv server ${this.url}`;
    // ws loads with the first session (~0.05 CPU-s at every command's start otherwise).
    const { default: Socket } = await import('ws');
    const socket = new Socket(this.wsUrl, {
      maxPayload: this.options.maxReplyBytes,
      handshakeTimeout: this.options.timeoutMs,
      perMessageDeflate: false,
      headers: authHeaders(this.options),
    });
    // Listening from the first frame on: OpenEnv sends CAPACITY_REACHED right after accepting, and that
    // frame can arrive with the handshake, before an awaited 'open' would let a listener be attached.
    const session = new OpenEnvSession(socket, where, this.options);
    await new Promise<void>((resolve, reject) => {
      const fail = (e: Error) => {
        cleanup();
        socket.terminate();
        reject(e);
      };
      const onOpen = () => {
        cleanup();
        resolve();
      };
      const onError = (e: Error) => fail(openingFailure(e, where, this.wsUrl, this.options.timeoutMs));
      const onAbort = () => fail(signal!.reason instanceof Error ? signal!.reason : new Error('cancelled'));
      const cleanup = () => {
        socket.off('open', onOpen);
        socket.off('error', onError);
        signal?.removeEventListener('abort', onAbort);
      };
      socket.once('open', onOpen);
      socket.once('error', onError);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
    return session;
  }
}

/**
 * Why a WebSocket did not open, as the class the callers act on: an HTTP status to the upgrade (a 403
 * from a server that refuses the origin, a 404 from one with no /ws) is the server's refusal, a
 * handshake past the timeout a server that hangs, anything else a connection that failed (retried).
 */
function openingFailure(e: Error, where: string, wsUrl: string, timeoutMs: number): Error {
  const status = /^Unexpected server response: (\d{3})$/.exec(e.message)?.[1];
  if (status) return new HttpStatusError(`${where}: the WebSocket upgrade at ${wsUrl} answered HTTP ${status}`, Number(status));
  if (/handshake has timed out/i.test(e.message))
    return new ServerTimedOut(`${where}: no answer to the WebSocket upgrade at ${wsUrl} within ${timeoutMs} ms (env.timeoutMs)`);
  return new SessionLost(`${where}: cannot open a session at ${wsUrl}: ${e.message}`);
}

/** One WebSocket: requests answered in order, one at a time. */
class OpenEnvSession implements RemoteSession {
  private pending?: { resolve: (text: string) => void; reject: (e: Error) => void };
  /** A frame that came before the first request (OpenEnv sends CAPACITY_REACHED right after accepting). */
  private early?: string;
  /** Whether a request was sent: from then on every frame must answer one. */
  private requested = false;
  private lost?: Error;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly socket: WebSocket,
    private readonly where: string,
    private readonly options: OpenEnvServerOptions,
  ) {
    socket.on('message', (data, isBinary) => {
      const text = isBinary ? undefined : data.toString();
      if (text === undefined) return this.drop(new RemoteProtocolError(`${where}: sent a binary frame; OpenEnv sessions speak JSON text`));
      if (this.pending) {
        const p = this.pending;
        this.pending = undefined;
        p.resolve(text);
      } else if (!this.requested && this.early === undefined) this.early = text;
      else
        // A second answer to one request, or a flood: taken as the next request's answer it would pair
        // an action with an observation the environment never gave for it.
        this.drop(
          new RemoteProtocolError(
            `${where}: sent a frame no request was waiting for (${clipped(text.slice(0, 80))}); an OpenEnv server answers each message once`,
          ),
        );
    });
    socket.on('error', (e) =>
      this.drop(
        (e as { code?: string }).code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH'
          ? new RemoteProtocolError(`${where}: sent a frame larger than ${this.options.maxReplyBytes} bytes (env.maxReplyBytes); refused`)
          : new SessionLost(`${where}: the session's socket failed: ${e.message}`),
      ),
    );
    socket.on('close', (code, reason) =>
      this.drop(new SessionLost(`${where}: the session's socket closed (code ${code}${reason.length ? `, ${clipped(reason.toString())}` : ''})`)),
    );
  }

  private drop(e: Error): void {
    // A frame the server sent before closing (its error) is the better message.
    this.lost ??= e;
    const p = this.pending;
    this.pending = undefined;
    p?.reject(this.lost);
    if (this.socket.readyState === this.socket.OPEN || this.socket.readyState === this.socket.CONNECTING) this.socket.terminate();
  }

  /** Sends one message and waits for the next frame (queued behind any request in flight). */
  private request(message: string, signal?: AbortSignal): Promise<string> {
    const run = this.queue.then(() => this.exchange(message, signal));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private exchange(message: string, signal?: AbortSignal): Promise<string> {
    this.requested = true;
    if (this.early !== undefined) {
      const text = this.early;
      this.early = undefined;
      return Promise.resolve(text);
    }
    if (this.lost) return Promise.reject(this.lost);
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => this.drop(new ServerTimedOut(`${this.where}: no answer within ${this.options.timeoutMs} ms (env.timeoutMs); the session was closed`)),
        this.options.timeoutMs,
      );
      const onAbort = () => this.drop(signal!.reason instanceof Error ? signal!.reason : new Error('cancelled'));
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      this.pending = {
        resolve: (t) => (done(), resolve(t)),
        reject: (e) => (done(), reject(e)),
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.socket.send(message, (e) => {
        if (e) this.drop(new SessionLost(`${this.where}: sending failed: ${e.message}`));
      });
    });
  }

  private async observation(message: string, signal?: AbortSignal): Promise<RemoteReply> {
    const text = await this.request(message, signal);
    const parsed = parseOpenEnvMessage(text, this.where, this.options.observationField, this.options.candidatesField);
    if (parsed.kind !== 'observation') throw new RemoteProtocolError(`${this.where}: answered a ${parsed.kind} message where an observation was due`);
    return parsed.reply;
  }

  reset(params: Record<string, unknown>, signal?: AbortSignal): Promise<RemoteReply> {
    return this.observation(openEnvResetMessage(params), signal);
  }

  step(action: string, signal?: AbortSignal, keep = false): Promise<RemoteReply> {
    return this.observation(openEnvStepMessage(openEnvAction(this.options.actionField, action), keep), signal);
  }

  fork(key: string, signal?: AbortSignal): Promise<RemoteReply> {
    return this.observation(openEnvForkMessage(key), signal);
  }

  async close(): Promise<void> {
    const socket = this.socket;
    if (socket.readyState !== socket.OPEN) {
      socket.terminate();
      return;
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(
        () => {
          socket.terminate();
          resolve();
        },
        Math.min(this.options.timeoutMs, 5_000),
      );
      socket.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
      // OpenEnv ends the session on this message and closes the socket; close() as well, for servers that do not.
      socket.send(openEnvCloseMessage(), () => socket.close(1000));
    });
  }
}
