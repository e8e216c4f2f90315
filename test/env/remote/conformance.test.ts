/**
 * Conformance with the real servers, from vectors recorded once (test/data/remote-env; each file names
 * the repository commit and how it was recorded, scripts/remote-env-vectors):
 *  - AgentGym's TextCraft server (the real process, Debian's FastAPI): an episode to reward 1, the same
 *    task in a second environment, its error answers, and a restarted server answering the same task.
 *  - OpenEnv's grid_world and maze environments (answers made by OpenEnv's own message models and
 *    serialization over the real environment classes; its FastAPI server cannot run here).
 *
 * The recorded servers cannot run in CI (they need the repositories), so each recording is played back
 * by a small server here that answers a request only when it is the recorded one, in the recorded order:
 * our client's requests must be what the official clients send, and our reading of the answers must
 * give what the recorded server meant. Then the answers of our own server (`trace-rl env serve`, the
 * world) are checked against the real servers' shapes, field by field.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import WebSocket, { WebSocketServer } from 'ws';
import { agentGymRequests, parseAgentGymCreate, parseAgentGymObservation, parseAgentGymReply } from '../../../src/env/remote/agentgym-protocol.ts';
import { AgentGymServer } from '../../../src/env/remote/agentgym-session.ts';
import { HttpStatusError } from '../../../src/env/remote/http-json.ts';
import { agentGymKind } from '../../../src/env/remote/kind.ts';
import {
  actionFieldFromSchema,
  observationText,
  openEnvAction,
  openEnvCloseMessage,
  openEnvResetMessage,
  openEnvStateMessage,
  openEnvStepMessage,
  parseOpenEnvMessage,
} from '../../../src/env/remote/openenv-protocol.ts';
import { OpenEnvServer } from '../../../src/env/remote/openenv-session.ts';
import { RemoteServerError } from '../../../src/env/remote/reply.ts';
import { RemoteEnv } from '../../../src/env/remote/remote-env.ts';
import { ServedEnv } from '../../../src/env/remote/serve/served-env.ts';
import { serveEnvironment } from '../../../src/env/remote/serve/servers.ts';
import { isCapacityRefusal } from '../../../src/env/remote/session.ts';
import { ReplayMismatch } from '../../../src/env/errors.ts';
import { worldKind } from '../../../src/env/world/kind.ts';

const DATA = join(import.meta.dirname, '../../data/remote-env');
const read = (file: string) => JSON.parse(readFileSync(join(DATA, file), 'utf8'));

interface HttpExchange {
  request: { method: 'GET' | 'POST'; path: string; body?: Record<string, unknown> };
  response: { status: number; body: unknown };
}
interface WsExchange {
  send: string;
  receive: Record<string, unknown> | null;
}

const textcraft = read('agentgym/textcraft.json') as {
  source: { commit: string };
  episode: HttpExchange[];
  replay: HttpExchange[];
  errors: HttpExchange[];
  restartedServer: { exchanges: HttpExchange[] };
};
const grid = read('openenv/grid_world.json') as { http: HttpExchange[]; session: WsExchange[]; capacity: Record<string, unknown> };
const maze = read('openenv/maze.json') as { http: HttpExchange[]; session: WsExchange[]; replay: WsExchange[] };
const limits = { timeoutMs: 5_000, maxReplyBytes: 1024 * 1024 };

const closers: Array<() => Promise<void>> = [];
after(async () => {
  for (const close of closers) await close();
});

function listen(server: Server): Promise<string> {
  closers.push(
    () =>
      new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      }),
  );
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
}

/**
 * A recorded AgentGym server played back: each request must be a recorded one not yet answered (the
 * method, path and body AgentGym's own client sent), else 409 naming it. One liberty: our
 * /create sends {} where AgentGym's TextCraft client sends {minecraft_dir, commands: null, goal: null}
 * (fields TextCraft's server defaults or ignores), so /create is matched by route alone.
 */
function playbackHttp(exchanges: HttpExchange[]): { start: () => Promise<string>; left: () => HttpExchange[]; seen: string[] } {
  const pending = [...exchanges];
  const seen: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      const sent = body ? (JSON.parse(body) as Record<string, unknown>) : undefined;
      seen.push(`${req.method} ${req.url} ${body}`);
      const i = pending.findIndex(
        (e) =>
          e.request.method === req.method &&
          e.request.path === req.url &&
          (e.request.path === '/create' || JSON.stringify(sortKeys(e.request.body)) === JSON.stringify(sortKeys(sent))),
      );
      let status = 409;
      let answer: unknown = { mismatch: `no recorded ${req.method} ${req.url} with this body is left: ${body}` };
      if (i >= 0) {
        const [next] = pending.splice(i, 1);
        status = next!.response.status;
        answer = next!.response.body;
      }
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer));
    });
  });
  return { start: () => listen(server), left: () => pending, seen };
}

function sortKeys(v: unknown): unknown {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return v;
  return Object.fromEntries(
    Object.entries(v as Record<string, unknown>)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, x]) => [k, sortKeys(x)]),
  );
}

/**
 * A recorded OpenEnv session played back on /ws: each message must equal (as JSON) a recorded one, taken
 * in order (recorded messages our client never sends, like malformed JSON, are passed over); the
 * recorded answer is sent, and a recorded `close` (no answer) closes the socket as OpenEnv does.
 */
async function playbackWs(sessions: WsExchange[][], firstFrame?: Record<string, unknown>): Promise<{ url: string; unmatched: string[] }> {
  const queue = sessions.map((s) => [...s]);
  const unmatched: string[] = [];
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', path: '/ws' });
  closers.push(
    () =>
      new Promise<void>((done) => {
        for (const c of wss.clients) c.terminate();
        wss.close(() => done());
      }),
  );
  wss.on('connection', (socket) => {
    if (firstFrame) {
      socket.send(JSON.stringify(firstFrame), () => socket.close());
      return;
    }
    const recording = queue.shift() ?? [];
    socket.on('message', (data) => {
      const text = data.toString();
      const message = JSON.stringify(sortKeys(JSON.parse(text)));
      const i = recording.findIndex((e) => {
        try {
          return JSON.stringify(sortKeys(JSON.parse(e.send))) === message;
        } catch {
          return false;
        }
      });
      if (i < 0) {
        unmatched.push(text);
        socket.send(JSON.stringify({ type: 'error', data: { message: `not in the recording: ${text}`, code: 'PLAYBACK' } }));
        return;
      }
      const [e] = recording.splice(0, i + 1).slice(-1);
      if (e!.receive === null) socket.close(1000);
      else socket.send(JSON.stringify(e!.receive));
    });
  });
  await new Promise<void>((r) => wss.once('listening', () => r()));
  return { url: `http://127.0.0.1:${(wss.address() as AddressInfo).port}`, unmatched };
}

const textOf = (e: HttpExchange) => (e.response.body as { observation: string }).observation;

// ---------------------------------------------------------------- AgentGym: TextCraft

test('AgentGym: our requests are the ones AgentGym’s TextCraft client sends (reset, step, observation, close)', () => {
  const [, reset, step] = textcraft.episode;
  assert.deepEqual(sortKeys(agentGymRequests.reset(0, { data_idx: 2 })), sortKeys(reset!.request));
  assert.deepEqual(sortKeys(agentGymRequests.step(0, 'inventory')), sortKeys(step!.request));
  const observation = textcraft.episode.find((e) => e.request.method === 'GET')!;
  assert.deepEqual(agentGymRequests.observation(0), observation.request);
  const close = textcraft.episode.at(-1)!;
  assert.deepEqual(sortKeys(agentGymRequests.close(0)), sortKeys(close.request));
  // /create: ours sends no field; the recorded client's fields are ones TextCraft's server defaults.
  assert.equal(agentGymRequests.create().path, textcraft.episode[0]!.request.path);
  assert.deepEqual(
    Object.values(textcraft.episode[0]!.request.body!).filter((v) => v !== null),
    ['agentenv_textcraft/'],
  );
});

test('AgentGym: TextCraft’s answers read as the server meant them', () => {
  const [create, reset, ...rest] = textcraft.episode;
  assert.equal(parseAgentGymCreate(create!.response.body, 'textcraft'), 0);
  const first = parseAgentGymReply(reset!.response.body, 'textcraft', 'reset')!;
  assert.equal(first.observation, textOf(reset!));
  assert.match(first.observation, /^Crafting commands:\n[\s\S]*\n\nGoal: craft glass pane\.$/);
  assert.equal(first.done, false);
  const steps = rest.filter((e) => e.request.path === '/step').map((e) => parseAgentGymReply(e.response.body, 'textcraft', 'step')!);
  assert.deepEqual(
    steps.map((s) => [s.observation, s.reward, s.done]),
    rest
      .filter((e) => e.request.path === '/step')
      .map((e) => {
        const b = e.response.body as { observation: string; reward: number; done: boolean };
        return [b.observation, b.reward, b.done];
      }),
  );
  assert.deepEqual([steps.at(-1)!.reward, steps.at(-1)!.done], [1, true], 'crafting the goal ends the episode with reward 1');
  const observation = textcraft.episode.find((e) => e.request.method === 'GET')!;
  assert.equal(parseAgentGymObservation(observation.response.body, 'textcraft'), steps.at(-1)!.observation);
  // A closed environment: HTTP 200 with {"error"}, which is the server's refusal, not an observation.
  assert.throws(
    () => parseAgentGymReply(textcraft.errors[0]!.response.body, 'textcraft', 'step'),
    (e: Error) => {
      return e instanceof RemoteServerError && /The id 0 is not valid\./.test(e.message);
    },
  );
});

test('AgentGym: a TextCraft episode and its replay through our client, and a restarted server caught by the replay check', async () => {
  // The kind builds against the server: the task's first observation is fetched once, in one environment (id 0) that is then closed.
  const episode = playbackHttp(textcraft.episode);
  const setup = await agentGymKind.build(
    agentGymKind.schema.parse({ kind: 'agentgym', url: await episode.start(), tasks: [2], sessions: 1, timeoutMs: 5_000 }),
    {
      maxTurns: 6,
    },
  );
  assert.equal(setup.env.render(setup.train[0]!), textOf(textcraft.episode[1]!), 'the prompt is the recorded first observation');
  assert.deepEqual(
    episode.left().map((e) => `${e.request.method} ${e.request.path}`),
    ['POST /step', 'POST /step', 'POST /step', 'POST /step', 'GET /observation?id=0'],
    `create, reset and close matched the recording:\n${episode.seen.join('\n')}`,
  );

  // The same task in a second environment, as a replay drives it: the same first observation and answers.
  const replay = playbackHttp(textcraft.replay);
  const server = new AgentGymServer({ ...limits, url: await replay.start() });
  const session = await server.open();
  assert.equal((await session.reset({ data_idx: 2 })).observation, textOf(textcraft.episode[1]!));
  for (const action of ['inventory', 'get 6 glass']) {
    const recorded = textcraft.episode.find((e) => e.request.body?.action === action)!;
    assert.equal((await session.step(action)).observation, textOf(recorded), `"${action}" answers as in the first environment`);
  }
  await session.close();
  assert.deepEqual(
    replay.left().map((e) => e.request.path),
    ['/observation?id=1'],
    `every request matched the recording:\n${replay.seen.join('\n')}`,
  );

  // A closed environment refuses (HTTP 200 {"error"}), closing twice answers false, a step without an action is FastAPI's 422.
  const errors = playbackHttp(textcraft.errors);
  const closedServer = new AgentGymServer({ ...limits, url: await errors.start() });
  await assert.rejects(
    closedServer.send(agentGymRequests.step(0, 'inventory')).then((raw) => parseAgentGymReply(raw, 'textcraft', 'step')),
    (e: unknown) => e instanceof RemoteServerError && /The id 0 is not valid/.test((e as Error).message),
  );
  assert.equal(await closedServer.send(agentGymRequests.close(0)), false);
  await assert.rejects(closedServer.send({ method: 'POST', path: '/step', body: { id: 0 } }), (e: unknown) => e instanceof HttpStatusError && e.status === 422);

  // A restarted server (another hash seed) answers the same task with another first observation: a
  // continuation's replay there is a ReplayMismatch at the prompt, not a silently different episode.
  const restarted = playbackHttp(textcraft.restartedServer.exchanges);
  const env = new RemoteEnv({
    server: new AgentGymServer({ ...limits, url: await restarted.start() }),
    maxTurns: 6,
    action: 'turn',
    successThreshold: 1,
    sessions: 1,
    branching: 'replay',
  });
  await assert.rejects(env.restore(setup.train[0]!, []), (e: unknown) => e instanceof ReplayMismatch && /prompt/.test((e as Error).message));
  assert.equal(env.openSessions, 0, 'the failed restore gave its session back');
  assert.deepEqual(
    restarted.left().map((e) => e.request.path),
    ['/observation?id=0'],
    `the restarted server saw create, reset and close:\n${restarted.seen.join('\n')}`,
  );
});

// ---------------------------------------------------------------- OpenEnv: grid_world, maze

test('OpenEnv: our messages are the official client’s, and the recorded frames read as meant', () => {
  const sent = (e: WsExchange) => sortKeys(JSON.parse(e.send));
  const [reset, down] = grid.session;
  assert.deepEqual(sortKeys(JSON.parse(openEnvResetMessage({ seed: 3 }))), sent(reset!));
  assert.deepEqual(sortKeys(JSON.parse(openEnvStepMessage(openEnvAction('action', 'DOWN')))), sent(down!));
  assert.deepEqual(JSON.parse(openEnvStateMessage()), sent(grid.session.find((e) => e.send.includes('"state"'))!));
  assert.deepEqual(JSON.parse(openEnvCloseMessage()), sent(grid.session.at(-1)!));

  const observations = grid.session.filter((e) => e.receive?.type === 'observation');
  for (const e of observations) {
    const parsed = parseOpenEnvMessage(JSON.stringify(e.receive), 'grid_world', 'message');
    const data = e.receive!.data as { observation: { message: string }; reward: number; done: boolean };
    assert.equal(parsed.kind, 'observation');
    if (parsed.kind !== 'observation') continue;
    assert.deepEqual([parsed.reply.observation, parsed.reply.reward, parsed.reply.done], [data.observation.message, data.reward, data.done]);
  }
  // The observation object carries x and y too; `message` is its only string field, found without naming it.
  assert.equal(
    observationText((observations[0]!.receive!.data as { observation: Record<string, unknown> }).observation, 'grid_world'),
    'Welcome to Grid World! Goal is at [4, 4].',
  );
  const state = parseOpenEnvMessage(JSON.stringify(grid.session.find((e) => e.receive?.type === 'state')!.receive), 'grid_world');
  assert.equal(state.kind, 'state');
  // Every error frame is the server's refusal with OpenEnv's code.
  const codes = grid.session
    .filter((e) => e.receive?.type === 'error')
    .map((e) => {
      try {
        parseOpenEnvMessage(JSON.stringify(e.receive), 'grid_world');
        return 'accepted';
      } catch (err) {
        assert.ok(err instanceof RemoteServerError, (err as Error).message);
        return err.code;
      }
    });
  assert.deepEqual(codes, ['VALIDATION_ERROR', 'VALIDATION_ERROR', 'INVALID_JSON', 'UNKNOWN_TYPE']);
  assert.throws(
    () => parseOpenEnvMessage(JSON.stringify(grid.capacity), 'grid_world'),
    (e: unknown) => isCapacityRefusal(e) && /Server at capacity: 1\/1/.test((e as Error).message),
  );
});

test('OpenEnv: /schema — grid_world’s enum action field is a string field; maze’s observation without text is refused naming the setting', () => {
  const schema = (v: { http: HttpExchange[] }) => v.http.find((e) => e.request.path === '/schema')!.response.body;
  // grid_world's action is {"action": {"$ref": "#/$defs/MoveAction"}}, a string enum.
  assert.equal(actionFieldFromSchema(schema(grid), 'grid_world', 'action'), 'action');
  // maze's observation has lists of numbers and no text: the agent has nothing to read, and the refusal says which setting names it.
  const mazeObservation = (maze.session[0]!.receive!.data as { observation: Record<string, unknown> }).observation;
  assert.throws(() => observationText(mazeObservation, 'maze'), /no string field.*env\.observationField/);
  const health = grid.http.find((e) => e.request.path === '/health')!.response.body;
  const metadata = grid.http.find((e) => e.request.path === '/metadata')!.response.body as Record<string, unknown>;
  assert.deepEqual(health, { status: 'healthy' });
  assert.equal(metadata.name, 'GridWorldEnvironment');
});

test('OpenEnv: a grid_world episode through our session client, and a full server refused with CAPACITY_REACHED', async () => {
  const { url, unmatched } = await playbackWs([grid.session]);
  const server = new OpenEnvServer({ ...limits, url, actionField: 'action', observationField: 'message' });
  const session = await server.open();
  const first = await session.reset({ seed: 3 });
  assert.equal(first.observation, 'Welcome to Grid World! Goal is at [4, 4].');
  const moves = ['DOWN', 'RIGHT', 'DOWN', 'DOWN', 'DOWN', 'RIGHT', 'RIGHT', 'RIGHT'];
  const replies = [];
  for (const m of moves) replies.push(await session.step(m));
  assert.deepEqual(
    replies.map((r) => r.reward),
    [-0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, 1],
  );
  assert.deepEqual([replies.at(-1)!.observation, replies.at(-1)!.done], ['You found the goal!', true]);
  await session.close();
  assert.deepEqual(unmatched, [], 'every message our client sent is in the recording');

  const full = await playbackWs([], grid.capacity);
  const refused = await new OpenEnvServer({ ...limits, url: full.url, actionField: 'action' }).open();
  await assert.rejects(refused.reset({ seed: 3 }), (e: unknown) => isCapacityRefusal(e));
  await refused.close();
});

test('OpenEnv: maze is replay-deterministic at a seed (two sessions, the same frames)', () => {
  assert.deepEqual(
    maze.replay.map((e) => e.receive),
    maze.session.map((e) => e.receive),
  );
});

// ---------------------------------------------------------------- our server against the real shapes

/** The JSON type of every field of a value, one level deep ('array', 'null', 'number', …). */
function shape(v: unknown): Record<string, string> | string {
  const kind = (x: unknown) => (x === null ? 'null' : Array.isArray(x) ? 'array' : typeof x);
  if (!v || typeof v !== 'object' || Array.isArray(v)) return kind(v);
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, kind(x)]));
}

/** Every field of the real answer is in ours, with the same JSON type (ours may add fields). */
function coversShape(real: unknown, ours: unknown, what: string): void {
  const r = shape(real);
  const o = shape(ours);
  if (typeof r === 'string') return assert.equal(o, r, `${what}: ${JSON.stringify(ours)}`);
  assert.equal(typeof o, 'object', `${what}: ${JSON.stringify(ours)}`);
  for (const [k, t] of Object.entries(r))
    assert.equal((o as Record<string, string>)[k], t, `${what}: field "${k}" is ${t} in the real server's answer; ours: ${JSON.stringify(ours)}`);
}

const world = await worldKind.build(worldKind.schema.parse({ kind: 'world', seed: 5, questions: 20 }), { maxTurns: 4 });

test('our AgentGym server answers in TextCraft’s shapes (create, reset, step, observation, an unknown id)', async () => {
  const running = await serveEnvironment(new ServedEnv(world, 'world', { maxSessions: 2 }), 'agentgym', { port: 0, maxBodyBytes: 1 << 20 });
  closers.push(() => running.close());
  const post = async (path: string, body: object) =>
    (await fetch(`${running.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json();
  const real = (path: string) => textcraft.episode.find((e) => e.request.path.startsWith(path))!.response.body;
  const created = (await post('/create', {})) as { id: number };
  assert.ok(Number.isInteger(created.id), 'create answers {"id": n} as TextCraft does');
  coversShape(real('/reset'), await post('/reset', { id: created.id, data_idx: 0 }), '/reset');
  coversShape(real('/step'), await post('/step', { id: created.id, action: '<search>anything</search>' }), '/step');
  coversShape(real('/observation'), await (await fetch(`${running.url}/observation?id=${created.id}`)).json(), 'GET /observation');
  coversShape(textcraft.errors[0]!.response.body, await post('/step', { id: 999, action: 'x' }), 'a step of an unknown id');
  await post('/close', { id: created.id });
});

test('our OpenEnv server answers in OpenEnv’s frames (reset, step, state, errors, close)', async () => {
  const running = await serveEnvironment(new ServedEnv(world, 'world', { maxSessions: 2 }), 'openenv', { port: 0, maxBodyBytes: 1 << 20 });
  closers.push(() => running.close());
  const socket = new WebSocket(`${running.url.replace('http', 'ws')}/ws`);
  await new Promise((r, j) => socket.once('open', r).once('error', j));
  const frames: string[] = [];
  socket.on('message', (d) => frames.push(d.toString()));
  const ask = async (text: string) => {
    const n = frames.length;
    socket.send(text);
    for (let i = 0; frames.length === n; i++) {
      assert.ok(i < 500, `no answer to ${text}`);
      await new Promise((r) => setTimeout(r, 10));
    }
    return JSON.parse(frames.at(-1)!) as { type: string; data: Record<string, unknown> };
  };
  const real = (pick: (e: WsExchange) => boolean) => grid.session.find(pick)!.receive as { type: string; data: Record<string, unknown> };
  const reset = await ask(openEnvResetMessage({ seed: 0 }));
  const realReset = real((e) => e.send.includes('"reset"'));
  assert.equal(reset.type, realReset.type);
  // reward: the real servers send a number or null at reset; ours sends null.
  assert.deepEqual(
    Object.keys(realReset.data).filter((k) => !(k in reset.data)),
    [],
    'every field of the real envelope is in ours',
  );
  assert.equal(typeof reset.data.observation, 'object');
  assert.equal(typeof reset.data.done, 'boolean');
  const step = await ask(openEnvStepMessage({ text: '<search>anything</search>' }));
  coversShape({ observation: {}, done: false }, step.data, 'step');
  assert.ok(step.data.reward === null || typeof step.data.reward === 'number');
  coversShape(real((e) => e.receive?.type === 'state').data, (await ask(openEnvStateMessage())).data, 'state');
  const errorOf = (send: string) => real((e) => e.send === send || (e.send.startsWith('{') && JSON.stringify(JSON.parse(e.send)) === send)).data;
  const badJson = await ask('not json');
  assert.equal(badJson.data.code, errorOf('not json').code);
  assert.match(String(badJson.data.message), /^Invalid JSON: /);
  const unknown = await ask(JSON.stringify({ type: 'jump' }));
  assert.equal(unknown.data.code, errorOf(JSON.stringify({ type: 'jump' })).code, 'an unknown message type is UNKNOWN_TYPE, as OpenEnv answers it');
  // close: OpenEnv sends nothing and closes the socket.
  const closed = new Promise<number>((r) => socket.once('close', (code) => r(code)));
  socket.send(openEnvCloseMessage());
  await closed;
  assert.equal(frames.length, 5, 'no answer to close');
});
