/**
 * A proxy in front of a real `serve --tinker` that records every request (path and JSON body) and
 * answer (bytes), and can answer one in the server's place or change its body. Why a stand-in at all: serve --tinker never answers 408 nor
 * holds a `retrieve_future` past a few seconds, as SkyRL does (408 after 300 s); the proxy makes those
 * answers, and lets a test see the calls a client makes (their order, seq_ids, chunks, heartbeats).
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeForwardBackward, PROTOBUF } from '../../../src/policy/tinker/proto-codec.ts';
import { zstdDecompress } from '../../../src/policy/tinker/zstd.ts';

export interface Recorded {
  path: string;
  body: Record<string, unknown>;
}

/** What to do with a request instead of passing it on: answer it, or hold it this long first. */
export type Fault = { status: number; body: unknown } | { holdMs: number } | undefined;

export interface RecordingProxy {
  url: string;
  calls: Recorded[];
  /** The server's answers, as they came back (bytes and content type), in the order they came. */
  answers: Array<{ path: string; status: number; contentType: string; body: Buffer }>;
  /** Called per request, with how many requests to that path came before it; undefined passes it on. */
  fault: (path: string, nth: number) => Fault;
  /** Changes a request's JSON body before it is passed on (an engine that ignores a field); undefined passes it as sent. */
  rewrite: (path: string, body: Record<string, unknown>) => Record<string, unknown> | undefined;
  /** The requests to a path, in order. */
  to(path: string): Recorded[];
  close(): Promise<void>;
}

const read = (req: IncomingMessage): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });

/** A body as recorded: JSON parsed (at once, as it arrived); the SDK's protobuf forward_backward (zstd or not) decoded to its JSON shape. */
function recorded(req: IncomingMessage, raw: Buffer): Record<string, unknown> | Promise<Record<string, unknown>> {
  if ((req.headers['content-type'] ?? '').startsWith(PROTOBUF))
    return (req.headers['content-encoding'] === 'zstd' ? zstdDecompress(raw, 64 << 20) : Promise.resolve(new Uint8Array(raw))).then(
      (plain) => decodeForwardBackward(plain) as unknown as Record<string, unknown>,
    );
  const text = raw.toString();
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const counts = new Map<string, number>();
  const proxy: RecordingProxy = {
    url: '',
    calls: [],
    answers: [],
    fault: () => undefined,
    rewrite: () => undefined,
    to: (path) => proxy.calls.filter((c) => c.path === path),
    close: () => new Promise<void>((res) => server.close(() => res())),
  };
  const server: Server = createServer((req, res) => {
    let gone = false;
    res.on('close', () => (gone = true));
    void (async () => {
      const raw = await read(req);
      const path = (req.url ?? '').replace(/\?.*$/, '');
      let body: Record<string, unknown> = {};
      try {
        const r = recorded(req, raw);
        body = r instanceof Promise ? await r : r;
      } catch {
        // neither JSON nor the SDK's protobuf: recorded empty
      }
      proxy.calls.push({ path, body });
      const nth = counts.get(path) ?? 0;
      counts.set(path, nth + 1);
      const fault = proxy.fault(path, nth);
      if (fault && 'status' in fault) {
        res.writeHead(fault.status, { 'content-type': 'application/json' }).end(JSON.stringify(fault.body));
        return;
      }
      // Held until the client gives up or holdMs passes, whichever comes first: a loaded machine may fire
      // the client's poll timer late, and a fixed hold would then forward a poll the client abandons after.
      if (fault)
        await new Promise<void>((r) => {
          const timer = setTimeout(r, fault.holdMs);
          res.once('close', () => (clearTimeout(timer), r()));
        });
      // A client that gave up on a held request never reaches the server (which would hand the result to no one).
      if (gone) return;
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && k !== 'host' && k !== 'content-length') headers[k] = v;
      const rewritten = proxy.rewrite(path, body);
      // A rewritten body goes on as JSON; any other as it came (protobuf and zstd bytes unchanged).
      if (rewritten) {
        headers['content-type'] = 'application/json';
        delete headers['content-encoding'];
      }
      const sent = rewritten ? JSON.stringify(rewritten) : new Uint8Array(raw);
      const answer = await fetch(`${target}${req.url}`, { method: req.method!, headers, ...(req.method === 'GET' ? {} : { body: sent }) });
      const out = Buffer.from(await answer.arrayBuffer());
      proxy.answers.push({ path, status: answer.status, contentType: answer.headers.get('content-type') ?? '', body: out });
      if (!res.destroyed) res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' }).end(out);
    })().catch((e: unknown) => {
      if (!res.headersSent) res.writeHead(502).end(String(e));
    });
  });
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return proxy;
}
