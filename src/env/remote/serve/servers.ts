/**
 * `trace-rl env serve`: a ServedEnv over either protocol, on one port.
 *  - openenv: GET /health, /schema, /metadata, and the `/ws` WebSocket (one environment per socket;
 *    past --max-sessions the socket gets {"type":"error","data":{"code":"CAPACITY_REACHED"}} and is
 *    closed, as an OpenEnv server does). The action is `{"text": "..."}`, the observation `{"text": "..."}`.
 *  - agentgym: POST /create, /reset {id, data_idx}, /step {id, action}, /close {id} (→ true, or false for an unknown id), GET /observation?id=;
 *    failures answer HTTP 200 {"error": "..."}, as AgentGym's servers do; a /create past --max-sessions HTTP 503 {"detail", "code": "CAPACITY_REACHED"}.
 * Bounded like every trace-rl server: request bodies and WebSocket frames by --max-body-bytes. Both
 * answer GET /sessions, the server's own counts ({open, opened, reaped, resets, steps, forks}). Every
 * request and upgrade, the fork routes included, passes the local-user checks first (access.ts), and
 * sessions idle past the served environment's idleTimeoutMs are closed.
 * With --fork-keep, both protocols speak the fork extension (../fork.ts): GET /fork, "keep" on a step,
 * and a session started from a kept state (OpenEnv: a {"type": "fork"} message; AgentGym: POST /fork).
 */
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { WebSocketServer, type WebSocket } from 'ws';
import { z } from 'zod';
import { createServerApp, readJson } from '../../../http/app.ts';
import { ServerStartError, type RunningServer } from '../../../http/listen.ts';
import type { RemoteReply } from '../reply.ts';
import { ServedEnvError, type ServedEnv, type ServedSession } from './served-env.ts';
import { refuseRequest, refuseUpgrade, serveAccessCheck, type ServeAccess } from './access.ts';

export interface ServeOptions {
  host?: string;
  port: number;
  /** Largest request body / WebSocket frame, bytes. */
  maxBodyBytes: number;
  /** A token every request must carry, and host names allowed besides the loopback ones. */
  access?: Omit<ServeAccess, 'boundHost'>;
}

export type Protocol = 'openenv' | 'agentgym';

export function serveEnvironment(served: ServedEnv, protocol: Protocol, options: ServeOptions): Promise<RunningServer> {
  return protocol === 'openenv' ? serveOpenEnv(served, options) : serveAgentGym(served, options);
}

/** OpenEnv's observation envelope of a reply (metadata only when not empty, as OpenEnv serializes it). */
function observationMessage(reply: RemoteReply): string {
  const data: Record<string, unknown> = { observation: { text: reply.observation }, reward: reply.reward ?? null, done: reply.done };
  if (Object.keys(reply.info).length > 0) data.metadata = reply.info;
  if (reply.kept !== undefined) data.kept = reply.kept;
  return JSON.stringify({ type: 'observation', data });
}

function errorMessage(message: string, code: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ type: 'error', data: { message, code, ...extra } });
}

function clippedType(type: unknown): string {
  return String(typeof type === 'string' ? type : (JSON.stringify(type) ?? '')).slice(0, 100);
}

const wsMessage = z.discriminatedUnion('type', [
  z.object({ type: z.literal('reset'), data: z.record(z.string(), z.unknown()).default({}) }),
  z.object({
    type: z.literal('step'),
    data: z.object({ text: z.string(), metadata: z.record(z.string(), z.unknown()).optional() }).strict(),
    keep: z.boolean().optional(),
  }),
  z.object({ type: z.literal('fork'), data: z.object({ key: z.string().max(200) }) }),
  z.object({ type: z.literal('state') }),
  z.object({ type: z.literal('close') }),
]);

async function serveOpenEnv(served: ServedEnv, options: ServeOptions): Promise<RunningServer> {
  const app = createServerApp({ maxBodyBytes: options.maxBodyBytes, bodySetting: '--max-body-bytes' });
  // OpenEnv's /health answers {"status": "healthy"}; the base app's is {"status": "ok"}: this route comes first.
  app.get('/health', (c) => c.json({ status: 'healthy' }));
  app.get('/schema', (c) =>
    c.json({
      action: { title: 'TextAction', type: 'object', properties: { text: { type: 'string' }, metadata: { type: 'object' } }, required: ['text'] },
      observation: {
        title: 'TextObservation',
        type: 'object',
        properties: { text: { type: 'string' }, done: { type: 'boolean' }, reward: { type: ['number', 'null'] }, metadata: { type: 'object' } },
      },
      state: { title: 'State', type: 'object', properties: { episode_id: { type: ['string', 'null'] }, step_count: { type: 'integer' } } },
    }),
  );
  app.get('/metadata', (c) => c.json({ name: `trace-rl ${served.kind}`, description: `trace-rl's ${served.kind} environment, served by trace-rl env serve` }));
  forkRoute(app, served);
  app.get('/sessions', (c) => c.json(sessionCounts(served)));
  const wss = new WebSocketServer({ noServer: true, maxPayload: options.maxBodyBytes });
  wss.on('connection', (socket: WebSocket) => openEnvSession(served, socket));
  const refusal = accessCheck(options);
  const server = guardedServer(getRequestListener(app.fetch), refusal);
  server.on('upgrade', (req, socket, head) => {
    if (new URL(req.url ?? '/', 'http://x').pathname !== '/ws') {
      socket.destroy();
      return;
    }
    const refused = refusal(req);
    if (refused) return refuseUpgrade(socket, refused);
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
  });
  return listenOn(server, served, options, () => {
    for (const client of wss.clients) client.terminate();
    wss.close();
  });
}

function openEnvSession(served: ServedEnv, socket: WebSocket): void {
  const session = served.open();
  if (!session) {
    socket.send(
      errorMessage(`server at capacity: ${served.openSessions} of ${served.maxSessions} sessions open`, 'CAPACITY_REACHED', {
        active_sessions: served.openSessions,
        max_sessions: served.maxSessions,
      }),
      () => socket.close(1000),
    );
    return;
  }
  const end = () => served.close(session);
  session.onReap = () => socket.close(1000, 'idle session closed by the server');
  socket.on('close', end);
  socket.on('error', end);
  // One message at a time, in order (a session is one environment instance).
  let queue = Promise.resolve();
  socket.on('message', (data, isBinary) => {
    queue = queue.then(() => answerOpenEnv(served, session, socket, isBinary ? undefined : data.toString()));
  });
}

async function answerOpenEnv(served: ServedEnv, session: ServedSession, socket: WebSocket, text: string | undefined): Promise<void> {
  if (socket.readyState !== socket.OPEN) return;
  let raw: unknown;
  try {
    raw = text === undefined ? undefined : JSON.parse(text);
  } catch (e) {
    socket.send(errorMessage(`Invalid JSON: ${(e as Error).message}`, 'INVALID_JSON'));
    return;
  }
  const type = (raw as { type?: unknown } | null)?.type;
  if (!['reset', 'step', 'state', 'close', 'fork'].includes(type as string)) {
    socket.send(errorMessage(`Unknown message type: ${clippedType(type)}`, 'UNKNOWN_TYPE'));
    return;
  }
  const msg = wsMessage.safeParse(raw);
  if (!msg.success) {
    socket.send(errorMessage(`Invalid message: ${msg.error.issues[0]?.message ?? 'bad shape'}`, 'VALIDATION_ERROR'));
    return;
  }
  try {
    switch (msg.data.type) {
      case 'reset':
        socket.send(observationMessage(await served.reset(session, msg.data.data)));
        return;
      case 'step':
        socket.send(observationMessage(await served.step(session, msg.data.data.text, msg.data.keep === true)));
        return;
      case 'fork':
        socket.send(observationMessage(served.fork(session, msg.data.data.key)));
        return;
      case 'state':
        socket.send(JSON.stringify({ type: 'state', data: { episode_id: session.prompt?.id ?? null, step_count: session.turns.length } }));
        return;
      case 'close':
        socket.close(1000);
        return;
    }
  } catch (e) {
    socket.send(errorMessage((e as Error).message, e instanceof ServedEnvError ? 'VALIDATION_ERROR' : 'EXECUTION_ERROR'));
  }
}

const id = z.number().int().nonnegative();

async function serveAgentGym(served: ServedEnv, options: ServeOptions): Promise<RunningServer> {
  const app = createServerApp({ maxBodyBytes: options.maxBodyBytes, bodySetting: '--max-body-bytes' });
  const sessions = new Map<number, ServedSession>();
  const sessionOf = (n: number): ServedSession => {
    const s = sessions.get(n);
    if (!s) throw new ServedEnvError(`The id ${n} is not valid.`);
    return s;
  };
  // AgentGym's servers report failures in the body of an HTTP 200.
  const guarded = async (f: () => Promise<unknown> | unknown) => {
    try {
      return await f();
    } catch (e) {
      if (e instanceof ServedEnvError) return { error: e.message };
      throw e;
    }
  };
  app.get('/', (c) => c.json(`This is environment trace-rl ${served.kind}.`));
  app.post('/create', (c) => {
    const s = served.open();
    // Past the cap: HTTP 503 with OpenEnv's code, which a client waits out (AgentGym's own servers have no cap).
    if (!s)
      return c.json(
        { detail: `at capacity: ${served.openSessions} of ${served.maxSessions} environments open; close one first`, code: 'CAPACITY_REACHED' },
        503,
      );
    sessions.set(s.number, s);
    s.onReap = () => sessions.delete(s.number);
    return c.json({ id: s.number });
  });
  app.post('/reset', async (c) => {
    const body = await readJson(c, z.object({ id }).passthrough());
    return c.json(
      await guarded(async () => {
        const { id: n, ...params } = body;
        const reply = await served.reset(sessionOf(n), params);
        return { id: n, observation: reply.observation, reward: 0, done: false, info: reply.info };
      }),
    );
  });
  app.post('/step', async (c) => {
    const body = await readJson(c, z.object({ id, action: z.string(), keep: z.boolean().optional() }));
    return c.json(
      await guarded(async () => {
        const reply = await served.step(sessionOf(body.id), body.action, body.keep === true);
        return { observation: reply.observation, reward: reply.reward ?? 0, done: reply.done, info: reply.info, ...(reply.kept ? { kept: reply.kept } : {}) };
      }),
    );
  });
  forkRoute(app, served);
  app.post('/fork', async (c) => {
    const body = await readJson(c, z.object({ id, key: z.string().max(200) }));
    return c.json(
      await guarded(() => {
        const reply = served.fork(sessionOf(body.id), body.key);
        return { id: body.id, observation: reply.observation, reward: reply.reward ?? 0, done: reply.done, info: reply.info };
      }),
    );
  });
  app.get('/observation', async (c) =>
    c.json(
      await guarded(() => {
        const s = sessionOf(Number(c.req.query('id')));
        const last = s.turns.at(-1);
        return last ? last.observation : s.prompt ? served.setup.env.render(s.prompt) : '';
      }),
    ),
  );
  app.post('/close', async (c) => {
    const body = await readJson(c, z.object({ id }));
    return c.json(
      await guarded(() => {
        // AgentGym's servers answer a bare boolean (false: no such environment).
        if (!sessions.has(body.id)) return false;
        served.close(sessionOf(body.id));
        sessions.delete(body.id);
        return true;
      }),
    );
  });
  app.get('/sessions', (c) => c.json(sessionCounts(served)));
  return listenOn(guardedServer(getRequestListener(app.fetch), accessCheck(options)), served, options, () => {});
}

function sessionCounts(served: ServedEnv) {
  return { open: served.openSessions, ...served.counts };
}

function accessCheck(options: ServeOptions) {
  return serveAccessCheck({ ...options.access, boundHost: options.host ?? '127.0.0.1' });
}

/** An HTTP server whose every request passes the access checks before reaching `listener`. */
function guardedServer(listener: RequestListener, refusal: ReturnType<typeof serveAccessCheck>): Server {
  return createServer((req, res) => {
    const refused = refusal(req);
    if (refused) return refuseRequest(res, refused);
    return listener(req, res);
  });
}

/** GET /fork: the fork offer (fork.ts), or 404 where the server does not fork. */
function forkRoute(app: ReturnType<typeof createServerApp>, served: ServedEnv): void {
  const offer = served.forkOffer;
  if (offer) app.get('/fork', (c) => c.json({ version: 1, max_kept: offer.maxKept, ttl_s: offer.ttlS }));
}

function listenOn(server: Server, served: ServedEnv, options: ServeOptions, beforeClose: () => void): Promise<RunningServer> {
  const host = options.host ?? '127.0.0.1';
  // Idle sessions are looked for a few times per timeout (never more often than every 50 ms).
  const idle = served.idleTimeoutMs;
  const reaper = idle === undefined ? undefined : setInterval(() => served.reapIdle(), Math.max(50, Math.min(idle / 4, 10_000)));
  reaper?.unref();
  return new Promise((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) => reject(new ServerStartError(`cannot listen on ${host}:${options.port}: ${e.code ?? e.message}`)));
    server.listen(options.port, host, () => {
      const port = (server.address() as AddressInfo).port;
      resolve({
        url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
        host,
        port,
        close: () =>
          new Promise<void>((done) => {
            beforeClose();
            if (reaper) clearInterval(reaper);
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
