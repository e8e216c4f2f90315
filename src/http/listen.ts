import type { AddressInfo } from 'node:net';
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
   * Most open connections (idle keep-alive ones included); a connection past it is closed as soon as
   * it is accepted, so a client holding thousands of sockets open cannot use up the process's file
   * descriptors and memory. Default: no cap (each command sets its own).
   */
  maxConnections?: number;
  /** Called for each connection closed because of maxConnections. */
  onConnectionDropped?: () => void;
}

/** Puts a hono app on host:port; start-up failures (port in use, unknown host…) reject with ServerStartError. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any app env: listen only needs fetch
export function listen(app: Pick<Hono<any>, 'fetch'>, options: ListenOptions): Promise<RunningServer> {
  const host = options.host ?? '127.0.0.1';
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, port: options.port, hostname: host }, (info: AddressInfo) => {
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
    });
    if (options.maxConnections !== undefined) server.maxConnections = options.maxConnections;
    if (options.onConnectionDropped) server.on('drop', options.onConnectionDropped);
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
