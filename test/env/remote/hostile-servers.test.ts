/**
 * Hostile and broken environment servers (issue 67 item 4). Each server here is a stand-in written to
 * misbehave on purpose: no real AgentGym or OpenEnv server can be made to answer a 422 at one task
 * only, hang, drip, answer twice or nest 100,000 deep on demand. Every failure is one message naming
 * the server, the task where there is one, and the server's own complaint with its control characters
 * escaped; a task refused at setup is skipped and counted, and the build fails only when none is left;
 * a hang or a drip fails once, within one timeout, and is not retried.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { agentGymKind, openEnvKind } from '../../../src/env/remote/kind.ts';
import { AgentGymServer } from '../../../src/env/remote/agentgym-session.ts';
import { OpenEnvServer } from '../../../src/env/remote/openenv-session.ts';
import { RemoteEnv } from '../../../src/env/remote/remote-env.ts';
import { RemoteServerError } from '../../../src/env/remote/reply.ts';
import { ServerTimedOut } from '../../../src/env/remote/session.ts';
import { taskPrompt } from '../../../src/env/remote/tasks.ts';

type Handler = (path: string, body: Record<string, unknown>, res: ServerResponse) => void;

/** An HTTP stand-in answering JSON routes with `handle`; `counts` counts requests per path. */
async function httpStandIn(handle: Handler) {
  const counts: Record<string, number> = {};
  const server = createServer((req: IncomingMessage, res) => {
    let text = '';
    req.on('data', (d: Buffer) => (text += d.toString()));
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0]!;
      counts[path] = (counts[path] ?? 0) + 1;
      handle(path, text ? (JSON.parse(text) as Record<string, unknown>) : {}, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  after(() => {
    server.closeAllConnections();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, counts };
}

const json = (res: ServerResponse, value: unknown, status = 200) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
};

/** An AgentGym server whose reset refuses some tasks: data_idx 1 with a 422, 2 with {"error": ""}, 3 with a hostile text. */
function refusingAgentGym(): Handler {
  let next = 0;
  return (path, body, res) => {
    if (path === '/create') return json(res, next++);
    if (path === '/close') return json(res, true);
    if (path === '/reset') {
      if (body.data_idx === 1) return json(res, { detail: [{ loc: ['body', 'data_idx'], msg: 'field required' }] }, 422);
      if (body.data_idx === 2) return json(res, { error: '' });
      if (body.data_idx === 3) return json(res, { error: 'bad task\u001b]0;owned\u0007\r\u001b[2Kforged' });
      return json(res, { observation: `task ${String(body.data_idx)}`, reward: 0, done: false });
    }
    return json(res, { detail: 'Not Found' }, 404);
  };
}

/** Runs `fn` with stderr captured. */
async function capturingStderr<T>(fn: () => T | Promise<T>): Promise<{ value?: T; error?: unknown; stderr: string }> {
  const write = process.stderr.write;
  let stderr = '';
  process.stderr.write = ((chunk: string | Uint8Array) => ((stderr += chunk.toString()), true)) as typeof process.stderr.write;
  try {
    return { value: await fn(), stderr };
  } catch (error) {
    return { error, stderr };
  } finally {
    process.stderr.write = write;
  }
}

const agentgym = (url: string, tasks: number[], extra: object = {}) =>
  agentGymKind.schema.parse({ kind: 'agentgym', url, tasks, sessions: 2, timeoutMs: 2_000, ...extra });

test('tasks refused at setup (422, {"error": ""}, a hostile text) are skipped and counted in one stderr line; the rest train', async () => {
  const { url } = await httpStandIn(refusingAgentGym());
  const r = await capturingStderr(() => agentGymKind.build(agentgym(url, [0, 1, 2, 3, 4]), { maxTurns: 3 }));
  assert.equal(r.error, undefined);
  assert.deepEqual(
    r.value!.train.map((p) => p.id),
    ['idx-0', 'idx-4'],
  );
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, r.stderr);
  const line = lines[0]!;
  assert.match(line, /3 of 5 tasks refused by the server at setup and skipped/);
  assert.match(line, /task "idx-1".*HTTP 422: .*field required/, 'the 422 with the server’s own text');
  assert.match(line, /task "idx-2".*the server refused: \(an empty error message\)/, 'an empty error said to be empty');
  assert.match(line, /task "idx-3".*bad task\\x1b\]0;owned\\x07\\r\\x1b\[2Kforged/, 'control characters escaped');
  assert.doesNotMatch(line, /[\u0000-\u001f]/);
});

test('every training task refused: the build fails in one line naming the server, the count and the first complaint', async () => {
  const { url } = await httpStandIn(refusingAgentGym());
  const r = await capturingStderr(() => agentGymKind.build(agentgym(url, [1, 2]), { maxTurns: 3 }));
  assert.ok(r.error instanceof RemoteServerError, String(r.error));
  const message = (r.error as Error).message;
  assert.match(message, new RegExp(`^agentgym server ${url}: all 2 training tasks were refused at setup`));
  assert.match(message, /HTTP 422: .*field required/);
  assert.doesNotMatch(message, /\n/);
});

/** An OpenEnv stand-in: HTTP routes from `http`, WebSocket sessions answered by `answer` (undefined: silence; an array: several frames). */
async function openEnvStandIn(options: { schema?: unknown; upgrade?: number; answer?: (message: { type: string }) => string | string[] | undefined }) {
  const server = createServer((req, res) => {
    if (req.url === '/schema' && options.schema !== undefined) return json(res, options.schema);
    return json(res, { detail: 'Not Found' }, 404);
  });
  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket, head) => {
    if (options.upgrade) {
      socket.end(`HTTP/1.1 ${options.upgrade} Forbidden\r\ncontent-length: 0\r\n\r\n`);
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) =>
      ws.on('message', (m) => {
        const a = options.answer?.(JSON.parse(m.toString()) as { type: string });
        for (const frame of [a ?? []].flat()) ws.send(frame);
      }),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  after(() => {
    for (const c of wss.clients) c.terminate();
    server.closeAllConnections();
    server.close();
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const textSchema = { action: { properties: { text: { type: 'string' } } }, observation: {}, state: {} };
const obs = (text: string, extra: object = {}) => JSON.stringify({ type: 'observation', data: { observation: { text }, reward: null, done: false, ...extra } });
const openenv = (url: string, extra: object = {}) => openEnvKind.schema.parse({ kind: 'openenv', url, tasks: [0, 1], sessions: 1, timeoutMs: 2_000, ...extra });

test('OpenEnv: /schema answering 404 fails the build in one line naming the route and the fix', async () => {
  const url = await openEnvStandIn({ answer: () => obs('hello') });
  const r = await capturingStderr(() => openEnvKind.build(openenv(url), { maxTurns: 3 }));
  assert.ok(r.error instanceof RemoteServerError, String(r.error));
  assert.match((r.error as Error).message, /GET \/schema answered HTTP 404: Not Found\); give env\.action\.field/);
});

test('OpenEnv: /ws answering 403 refuses every task with the status (not "could not be reached"), in one line', async () => {
  const url = await openEnvStandIn({ schema: textSchema, upgrade: 403 });
  const r = await capturingStderr(() => openEnvKind.build(openenv(url), { maxTurns: 3 }));
  assert.ok(r.error instanceof RemoteServerError, String(r.error));
  assert.match((r.error as Error).message, /all 2 training tasks were refused at setup.*WebSocket upgrade at ws:\/\/.*\/ws answered HTTP 403/);
});

function remoteEnvOn(server: AgentGymServer | OpenEnvServer) {
  return new RemoteEnv({ server, maxTurns: 4, action: 'turn', successThreshold: 1, sessions: 1, branching: 'replay', reconnectDelayMs: 10 });
}
const prompt = (observation: string, params: Record<string, unknown>) => taskPrompt({ id: 'idx-0', params }, { observation }, 'stand-in');
const act = { type: 'turn', input: 'go' };

test('a server whose /step hangs or drips fails the step once, within one timeout, not retried (ServerTimedOut)', async () => {
  const behaviours: Record<string, (res: ServerResponse) => void> = {
    hang: () => {},
    drip: (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const timer = setInterval(() => res.write(' '), 50);
      res.on('close', () => clearInterval(timer));
    },
  };
  await Promise.all(
    Object.entries(behaviours).map(async ([what, misbehave]) => {
      const { url, counts } = await httpStandIn((path, _body, res) => {
        if (path === '/create') return json(res, 0);
        if (path === '/reset') return json(res, { observation: 'start', reward: 0, done: false });
        if (path === '/step') return misbehave(res);
        return json(res, true);
      });
      const env = remoteEnvOn(new AgentGymServer({ url, timeoutMs: 500, maxReplyBytes: 1 << 20 }));
      const s = await env.reset(prompt('start', { data_idx: 0 }));
      const e = await env.step(s, act).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(e instanceof ServerTimedOut, `${what}: ${String(e)}`);
      assert.equal((e as ServerTimedOut).retryable, false);
      assert.match((e as Error).message, new RegExp(`^task "idx-0", turn 1: agentgym server ${url}.*POST /step: .*within 500 ms \\(env.timeoutMs\\)`), what);
      assert.equal(counts['/step'], 1, `${what}: the step was sent once (no reconnect and replay after a hang)`);
      assert.equal(counts['/create'], 1, `${what}: no second session`);
      await env.release(s);
    }),
  );
});

test('OpenEnv: a second answer to one step is a protocol error naming the server, never the next step’s answer', async () => {
  let steps = 0;
  const url = await openEnvStandIn({
    answer: (m) => (m.type === 'reset' ? obs('start') : m.type === 'step' ? [obs(`answer ${++steps}`), obs(`extra ${steps}`)] : undefined),
  });
  const env = remoteEnvOn(new OpenEnvServer({ url, timeoutMs: 2_000, maxReplyBytes: 1 << 20, actionField: 'text' }));
  const s = await env.reset(prompt('start', { seed: 0 }));
  const first = await env.step(s, act);
  assert.equal(first.observation, 'answer 1');
  await assert.rejects(env.step(first.state, act), (e: Error) => {
    assert.match(e.message, new RegExp(`openenv server ${url}: sent a frame no request was waiting for \\(.*extra 1`));
    assert.equal((e as { retryable?: boolean }).retryable, false);
    return true;
  });
  await env.release(first.state);
});

test('size and depth bounds name the field and the bound: 100,000 candidates, an observation nested 100,000 deep', async () => {
  const deep = `{"type":"observation","data":{"observation":{"text":"x","nest":${'['.repeat(100_000)}${']'.repeat(100_000)}},"done":false}}`;
  const cases: Array<[string, string, RegExp]> = [
    [
      'candidates',
      obs('x', { metadata: { candidates: Array.from({ length: 100_000 }, (_, i) => `a${i}`) } }),
      /candidates: 100000 listed, more than the 1000 a turn may offer/,
    ],
    ['nesting', deep, /the answer nests deeper than 64 levels \(at character \d+\); refused/],
  ];
  for (const [what, frame, message] of cases) {
    const url = await openEnvStandIn({ answer: (m) => (m.type === 'reset' ? obs('start') : frame) });
    const env = remoteEnvOn(new OpenEnvServer({ url, timeoutMs: 2_000, maxReplyBytes: 4 << 20, actionField: 'text' }));
    const s = await env.reset(prompt('start', { seed: 0 }));
    await assert.rejects(
      env.step(s, act),
      (e: Error) => (assert.match(e.message, message, what), assert.equal((e as { retryable?: boolean }).retryable, false), true),
    );
    await env.release(s);
  }
});
