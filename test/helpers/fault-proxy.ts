/**
 * A real HTTP proxy in front of a real server (an OpenAI-compatible stand-in, `serve --tinker`, an
 * environment server) that forwards every request until a chosen route has been called `after` times,
 * then answers that route with one failure class: an HTTP status (400, 413, 503…), a hang (no answer
 * until the client gives up), or a refused connection (the proxy stops listening: the call in flight
 * is cut and every later connection is refused). `heal()` forwards everything again (listening again
 * on the same port after a refusal), so a test can resume the run it broke.
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type ProxyFault = { kind: 'status'; status: number } | { kind: 'hang' } | { kind: 'refuse' };

export interface FaultProxyOptions {
  upstream: string;
  /** The requests that fail, by path (e.g. /forward_backward$/). */
  route: RegExp;
  /** Matching requests forwarded before the fault starts (0: the first one fails), counted once armed. */
  after?: number;
  /** The fault is armed by the first request to this path (e.g. the step's checkpoint); default: armed from the start. */
  armOn?: RegExp;
  fault: ProxyFault;
}

export interface FaultProxy {
  /** The proxy's root, e.g. http://127.0.0.1:PORT (the upstream's path is kept: give it with /v1 if the upstream's has it). */
  url: string;
  /** Requests that got the fault. */
  readonly faulted: number;
  /** Every request's method and path, in arrival order (what a test counts calls by). */
  readonly log: string[];
  /** Forward everything from now on (listening again after a refusal). */
  heal(): Promise<void>;
  close(): Promise<void>;
}

export async function startFaultProxy(options: FaultProxyOptions): Promise<FaultProxy> {
  const upstream = new URL(options.upstream);
  let matched = 0;
  let faulted = 0;
  let healed = false;
  let armed = options.armOn === undefined;
  const log: string[] = [];
  const sockets = new Set<Socket>();
  const hanging = new Set<ServerResponse>();
  let server: Server;
  let port = 0;

  const forward = (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    const up = httpRequest(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, host: upstream.host } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    up.on('error', () => res.destroy());
    up.end(body);
  };

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const path = (req.url ?? '/').split('?')[0]!;
      log.push(`${req.method} ${path}`);
      if (!armed && options.armOn!.test(path)) armed = true;
      if (healed || !armed || !options.route.test(path) || matched++ < (options.after ?? 0)) return forward(req, res, body);
      faulted++;
      const f = options.fault;
      if (f.kind === 'status') {
        res.writeHead(f.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `injected HTTP ${f.status} on ${path}`, type: 'injected', code: `http_${f.status}` } }));
      } else if (f.kind === 'hang') hanging.add(res);
      else {
        server.close();
        for (const s of sockets) s.destroy();
      }
    });
  };

  const listen = async (at: number) => {
    server = createServer(handle);
    server.on('connection', (s: Socket) => {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    });
    await new Promise<void>((resolve) => server.listen(at, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  };
  await listen(0);
  const path = upstream.pathname.replace(/\/+$/, '');
  const stop = async () => {
    for (const r of hanging) r.destroy();
    hanging.clear();
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()));
  };
  return {
    url: `http://127.0.0.1:${port}${path}`,
    get faulted() {
      return faulted;
    },
    log,
    async heal() {
      healed = true;
      for (const r of hanging) r.destroy();
      hanging.clear();
      if (!server.listening) await listen(port);
    },
    close: stop,
  };
}
