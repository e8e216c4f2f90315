/**
 * AgentGym's dialects and the fields real servers use (issue 67 item 3), played back from vectors in
 * test/data/remote-env/agentgym written from the servers' sources (SQLGym and WebShop cannot run here:
 * they need packages and data Debian does not have; each vector's `source` says so):
 *  - SQLGym: the `env_idx` dialect, the numbered task at reset's `item_id` (env.taskField), `[observation,
 *    null]` answers, no /close; the default `data_idx` fails the build in one line with the 422's text;
 *  - WebShop under a path prefix, its task at `session_id`, candidates from `GET /available_actions`;
 *  - OpenEnv: candidates from an observation field (`legal_actions`, env.candidatesField).
 * The playback answers only the recorded requests (method, path and body), so a request our client
 * sends in another shape gets a 409 and fails the test.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { agentGymKind } from '../../../src/env/remote/kind.ts';
import { parseOpenEnvMessage } from '../../../src/env/remote/openenv-protocol.ts';
import { replyInfo, RemoteServerError } from '../../../src/env/remote/reply.ts';
import type { RemoteEnv } from '../../../src/env/remote/remote-env.ts';

interface Exchange {
  request: { method: string; path: string; body?: unknown };
  response: { status: number; body: unknown };
}
interface Vector {
  dialect: Record<string, string>;
  episode: Exchange[];
  wrongTaskField?: Exchange;
}
const read = (name: string) => JSON.parse(readFileSync(join(import.meta.dirname, '../../data/remote-env/agentgym', name), 'utf8')) as Vector;
const sqlgym = read('sqlgym-source.json');
const webshop = read('webshop-source.json');

/** A server that answers each recorded request once, in any order; anything else gets 409. */
async function playback(exchanges: Exchange[]) {
  const pending = [...exchanges];
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (d: Buffer) => (text += d.toString()));
    req.on('end', () => {
      const body = text ? (JSON.parse(text) as unknown) : undefined;
      const i = pending.findIndex((e) => e.request.method === req.method && e.request.path === req.url && sameJson(e.request.body, body));
      const hit = i >= 0 ? pending.splice(i, 1)[0]! : undefined;
      res.writeHead(hit?.response.status ?? 409, { 'content-type': 'application/json' });
      res.end(JSON.stringify(hit?.response.body ?? { detail: `not recorded: ${req.method} ${req.url} ${text}` }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  after(() => {
    server.closeAllConnections();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, left: () => pending.map((e) => `${e.request.method} ${e.request.path}`) };
}

/** Equal as JSON whatever the order of object keys. */
function sameJson(a: unknown, b: unknown): boolean {
  const sorted = (v: unknown): unknown =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v)
            .sort(([x], [y]) => x.localeCompare(y))
            .map(([k, x]) => [k, sorted(x)]),
        )
      : v;
  return JSON.stringify(sorted(a)) === JSON.stringify(sorted(b));
}

const settings = (url: string, dialect: Record<string, string>, task: number) =>
  agentGymKind.schema.parse({ kind: 'agentgym', url, tasks: [task], sessions: 1, timeoutMs: 5_000, ...dialect });

test('SQLGym (env_idx, item_id, [observation, null], no /close): a task built, stepped and closed as the source answers', async () => {
  const server = await playback(sqlgym.episode);
  const setup = await agentGymKind.build(settings(server.url, sqlgym.dialect, 3), { maxTurns: 4 });
  const prompt = setup.train[0]!;
  assert.equal(prompt.id, 'idx-3');
  assert.match(setup.env.render(prompt), /how many singers/);
  const env = setup.env as unknown as RemoteEnv;
  const s = await env.reset(prompt);
  const o = await env.step(s, { type: 'turn', input: 'SELECT count(*) FROM singer' });
  assert.equal(o.observation, '[(6,)]');
  assert.equal(o.done, true);
  assert.equal(o.score, 1);
  await env.release(o.state);
  assert.deepEqual(server.left(), [], 'every recorded request was made, /close included (its 404 is no failure)');
});

test('SQLGym with the default task field (data_idx): the build fails in one line carrying the server’s 422 text and naming env.taskField', async () => {
  const server = await playback([sqlgym.episode[0]!, sqlgym.wrongTaskField!, sqlgym.episode[2]!]);
  const { taskField: _, ...dialect } = sqlgym.dialect;
  await assert.rejects(
    async () => agentGymKind.build(settings(server.url, dialect, 3), { maxTurns: 4 }),
    (e: Error) => {
      assert.ok(e instanceof RemoteServerError);
      assert.doesNotMatch(e.message, /\n/);
      assert.match(e.message, /another field than "data_idx": set env\.taskField/);
      assert.match(e.message, /POST \/reset answered HTTP 422: .*item_id.*field required/);
      return true;
    },
  );
});

test('WebShop under /webshop: session_id, and candidates from GET /available_actions (clickables as click[…]) on the prompt and after each step', async () => {
  const server = await playback(webshop.episode);
  const setup = await agentGymKind.build(settings(server.url, webshop.dialect, 5), { maxTurns: 4 });
  const prompt = setup.train[0]!;
  assert.ok(setup.candidates, 'the kind offers the server’s candidates to the embedded policy');
  assert.deepEqual(setup.candidates(prompt, []).tool, [{ type: 'act', input: 'click[search]' }]);
  const env = setup.env as unknown as RemoteEnv;
  const s = await env.reset(prompt);
  const o = await env.step(s, { type: 'turn', input: 'search[slim fit jumpsuit]' });
  assert.match(o.observation, /B09QQP3356/);
  assert.deepEqual(
    o.env?.candidates?.tool?.map((c) => c.input),
    ['click[back to search]', 'click[next >]', 'click[b09qqp3356]'],
  );
  await env.release(o.state);
  assert.deepEqual(server.left(), []);
});

test('OpenEnv: candidates from an observation field (legal_actions), texts or numbers; a wrong shape names the field', () => {
  const frame = (legal: unknown) =>
    JSON.stringify({ type: 'observation', data: { observation: { text: 'your move', legal_actions: legal }, reward: null, done: false } });
  const parsed = parseOpenEnvMessage(frame([0, 3, 'pass']), 'openspiel', 'text', 'legal_actions');
  assert.equal(parsed.kind, 'observation');
  const reply = (parsed as { reply: { info: Record<string, unknown> } }).reply;
  assert.deepEqual(
    replyInfo(reply.info, 'openspiel').candidates?.tool?.map((c) => c.input),
    ['0', '3', 'pass'],
  );
  assert.throws(() => parseOpenEnvMessage(frame({ a: 1 }), 'openspiel', 'text', 'legal_actions'), /"legal_actions" \(env\.candidatesField\) is not a list/);
});
