import type { IncomingMessage, Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { serve } from '@hono/node-server';
import type { Hono } from 'hono';
import { UserError } from '../util/user-error.ts';

/** A server on a port: how every trace-rl HTTP service is started, addressed and stopped. */
export interface RunningServer {
  /** `http://host:port`, no trailing slash. */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** Stops listening and drops every open connection (in-flight requests see their socket close). */
  close(): Promise<void>;
}

/** The port or host could not be used; the message is one line naming the flag and the fix. */
export class ServerStartError extends UserError {
  override name = 'ServerStartError';
}

export interface ListenOptions {
  /** Interface to bind (default 127.0.0.1). */
  host?: string;
  /** Port; 0 picks a free one. */
  port: number;
  /**
   * Most open connections (idle keep-alive ones included), so a client holding thousands of sockets
   * open cannot use up the process's file descriptors and memory. A connection past it takes the place
   * of the oldest one without a whole request in flight (idle, still sending its headers or body), so
   * sockets that send nothing or drip a byte now and then cannot lock other clients out; when every
   * connection has a request in flight the new one is closed at once. With a cap, slow requests are
   * also cut short (see {@link RECLAIM}). Default: no cap (each command sets its own).
   */
  maxConnections?: number;
  /** Called for each new connection closed because every one of maxConnections had a request in flight. */
  onConnectionDropped?: () => void;
}

/**
 * Timeouts of a server with a connection cap: the headers must arrive within 10 s and the whole request
 * (body included; not its answer) within 30 s of the connection's first byte, checked every second;
 * an idle keep-alive connection is closed after 5 s (Node's default).
 */
export const RECLAIM = { headersMs: 10_000, requestMs: 30_000, checkEveryMs: 1000 } as const;

/**
 * Keeps at most `max` connections: a new one past it replaces the oldest without a whole request in
 * flight, or is closed itself when every one has (`onDropped`).
 */
function capConnections(server: Server, max: number, onDropped?: () => void): void {
  const open = new Set<Socket>();
  /** The request each connection is answering, while it is. */
  const current = new WeakMap<Socket, IncomingMessage>();
  const busy = (s: Socket) => current.get(s)?.complete === true;
  server.on('request', (req: IncomingMessage, res: { once(event: 'close', f: () => void): void }) => {
    current.set(req.socket, req);
    res.once('close', () => {
      if (current.get(req.socket) === req) current.delete(req.socket);
    });
  });
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    if (open.size <= max) return;
    for (const old of open)
      if (old !== socket && !busy(old)) {
        old.destroy();
        open.delete(old);
        return;
      }
    socket.destroy();
    open.delete(socket);
    onDropped?.();
  });
}

/** Puts a hono app on host:port; start-up failures (port in use, unknown host…) reject with ServerStartError. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any app env: listen only needs fetch
export function listen(app: Pick<Hono<any>, 'fetch'>, options: ListenOptions): Promise<RunningServer> {
  const host = options.host ?? '127.0.0.1';
  return new Promise((resolve, reject) => {
    const capped = options.maxConnections !== undefined;
    const server = serve(
      {
        fetch: app.fetch,
        port: options.port,
        hostname: host,
        ...(capped ? { serverOptions: { connectionsCheckingInterval: RECLAIM.checkEveryMs } } : {}),
      },
      (info: AddressInfo) => {
        server.off('error', onError);
        const urlHost = host.includes(':') ? `[${host}]` : host;
        resolve({
          url: `http://${urlHost}:${info.port}`,
          host,
          port: info.port,
          close: () =>
            new Promise<void>((done) => {
              server.close(() => done());
              // Keep-alive and in-flight connections would otherwise hold the server (and the process) open.
              (server as { closeAllConnections?: () => void }).closeAllConnections?.();
            }),
        });
      },
    );
    if (capped) {
      const http = server as Server;
      http.headersTimeout = RECLAIM.headersMs;
      http.requestTimeout = RECLAIM.requestMs;
      capConnections(http, options.maxConnections!, options.onConnectionDropped);
    }
    const onError = (e: NodeJS.ErrnoException) => reject(new ServerStartError(startError(e, host, options.port)));
    server.once('error', onError);
  });
}

function startError(e: NodeJS.ErrnoException, host: string, port: number): string {
  switch (e.code) {
    case 'EADDRINUSE':
      return `--port ${port}: already in use on ${host}; stop the other server or choose another --port (0 = any free port)`;
    case 'EACCES':
      return `--port ${port}: not allowed on ${host} (ports below 1024 need privileges); choose a port ≥ 1024 or 0`;
    case 'EADDRNOTAVAIL':
      return `--host ${host}: not an address of this machine; use 127.0.0.1, 0.0.0.0 or one of its interfaces`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_FAIL':
      return `--host ${host}: unknown host name; use an IP address such as 127.0.0.1 or 0.0.0.0`;
    default:
      return `cannot listen on ${host}:${port}: ${e.message}`;
  }
}
