import { request } from 'node:http';
import { spawn, type ChildProcess } from 'node:child_process';
import { BIN } from './run-cli.ts';

export interface ServerCli {
  /** The base URL the command printed. */
  url: string;
  child: ChildProcess;
  stderr(): string;
  /** Sends `signal` and resolves with the exit code and how long the process took to exit. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; ms: number }>;
}

/** Starts a real `trace-rl` server command and waits for the URL it prints on stderr. */
export function startServerCli(args: readonly string[]): Promise<ServerCli> {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return new Promise((resolve, reject) => {
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /(http:\/\/[^\s/]+)/.exec(err);
      if (m)
        resolve({
          url: m[1]!,
          child,
          stderr: () => err,
          stop: async (signal = 'SIGINT') => {
            const t = performance.now();
            if (child.exitCode === null) child.kill(signal);
            const code = await exited;
            return { code, ms: performance.now() - t };
          },
        });
    });
    void exited.then((code) => reject(new Error(`trace-rl ${args.join(' ')} exited with ${code}: ${err}`)));
  });
}

/**
 * Probes `GET url/health` every 100 ms until `during` settles; returns the slowest answer in ms and
 * how many probes ran (a server blocked by the request would answer late or not at all).
 */
export async function probeHealth(url: string, during: Promise<unknown>): Promise<{ slowest: number; probes: number }> {
  let done = false;
  void during.finally(() => (done = true)).catch(() => {});
  let slowest = 0;
  let probes = 0;
  while (!done) {
    const t = performance.now();
    const r = await fetch(`${url}/health`, { signal: AbortSignal.timeout(5000) });
    await r.json();
    slowest = Math.max(slowest, performance.now() - t);
    probes++;
    await new Promise((r) => setTimeout(r, 100));
  }
  return { slowest, probes };
}

export async function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: any }> {
  const r = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await r.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: r.status, json };
}

/**
 * Posts a body over the server's limit. The server answers 413 at once and drains the rest of the
 * upload for a short while (@hono/node-server: 500 ms, 64 MB); a slower upload is cut off, which the
 * client sees as a closed connection. Either way the server refused without reading the body.
 */
export function postOversized(url: string, body: string): Promise<{ status: number; json: any } | { closed: string }> {
  // Its own connection (no keep-alive pool): a connection the server cuts must not be reused by later requests.
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) }));
        res.on('error', (e: NodeJS.ErrnoException) => resolve({ closed: e.code ?? e.message }));
      },
    );
    req.on('error', (e: NodeJS.ErrnoException) => (['EPIPE', 'ECONNRESET'].includes(e.code ?? '') ? resolve({ closed: e.code! }) : reject(e)));
    req.end(body);
  });
}
