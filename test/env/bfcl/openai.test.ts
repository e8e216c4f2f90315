/**
 * The BFCL environment with the `openai` policy in chat mode with tools, through a real HTTP server.
 * The server is scripted (it answers each request with the entry's next ground-truth calls as
 * `tool_calls`, then a text reply to end the turn) because no model available here can do BFCL;
 * what is tested is the protocol: tools sent from the function docs, tool results sent back as `tool`
 * messages with matching ids, JSON arguments turned into BFCL calls, and the checker's reward.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { BfclEnv, bfclConversation } from '../../../src/env/bfcl/env.ts';
import { parseCall } from '../../../src/env/bfcl/py/literal.ts';
import { jsonDumps } from '../../../src/env/bfcl/py/format.ts';
import { OpenAIPolicy } from '../../../src/policy/openai/openai-policy.ts';
import type { Turn } from '../../../src/tree/types.ts';
import { createRng } from '../../../src/util/rng.ts';

const env = new BfclEnv({
  dataDir: join(import.meta.dirname, '../../../data/bfcl'),
  categories: ['base', 'miss_func'],
  seed: 1,
  today: { year: 2026, month: 11, day: 30 },
});
const prompt = [...env.train, ...env.test].find((p) => p.id === 'multi_turn_miss_func_0')!;
const entry = env.entry(prompt);
const requests: Record<string, unknown>[] = [];
let server: ReturnType<typeof createServer>;
let baseURL = '';

/** Where the conversation is: user turns so far and tool messages since the last user message. */
function reply(body: { messages: { role: string; tool_calls?: unknown[] }[] }): Record<string, unknown> {
  const userTurns = body.messages.filter((m) => m.role === 'user').length - 1;
  const last = body.messages.at(-1)!;
  const truth = entry.groundTruth[userTurns] ?? [];
  const message =
    last.role === 'user' && truth.length > 0
      ? {
          role: 'assistant',
          content: null,
          tool_calls: truth.map((call, i) => {
            const c = parseCall(call);
            // Some ground-truth calls pass arguments by position: name them from the function's docs.
            const names = Object.keys(env.functions(entry, entry.question.length).find((d) => d.name === c.name)!.parameters.properties);
            const args = new Map([...c.args.map((v, j) => [names[j]!, v] as const), ...c.kwargs]);
            return { id: `t${userTurns}_${i}`, type: 'function', function: { name: c.name, arguments: jsonDumps(args) } };
          }),
        }
      : { role: 'assistant', content: 'Done.' };
  return {
    id: 'x',
    object: 'chat.completion',
    choices: [{ index: 0, message, finish_reason: 'stop' }],
    usage: { prompt_tokens: 1, completion_tokens: 3, total_tokens: 4 },
  };
}

async function readBody(req: IncomingMessage): Promise<string> {
  let s = '';
  for await (const chunk of req) s += chunk;
  return s;
}

before(async () => {
  server = createServer(async (req, res) => {
    const body = JSON.parse(await readBody(req));
    requests.push(body);
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(reply(body)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

after(() => new Promise<void>((resolve) => server.close(() => resolve())));

test('chat mode with tools: a scripted server that returns the ground truth as tool_calls earns reward 1', async () => {
  const policy = new OpenAIPolicy({ baseURLs: [baseURL], model: 'scripted', mode: 'chat', conversation: bfclConversation(env), logprobs: false });
  const turns: Turn[] = [];
  let state = env.reset(prompt);
  let reward: number | undefined;
  const rng = createRng(5);
  for (let i = 0; i < 40 && reward === undefined; i++) {
    const out = await policy.act({ prompt, rendered: env.render(prompt), turns, rng: rng.fork(i), maxTokens: 256 });
    const step = await env.step(state, out.action!);
    turns.push({ thought: out.thought ?? '', action: out.action!, observation: step.observation });
    state = step.state;
    if (step.done) reward = step.reward;
  }
  assert.equal(reward, 1);
  const first = requests[0] as { tools: { type: string; function: { name: string; parameters: { type: string } } }[]; messages: unknown[]; stop?: unknown };
  assert.equal(first.stop, undefined);
  assert.ok(first.tools.length > 5);
  assert.ok(first.tools.every((t) => t.type === 'function' && t.function.parameters.type === 'object'));
  // The held-back function is not offered before its turn, and is offered from then on.
  const [revealTurn, names] = [...entry.missedFunction][0]!;
  const offered = (r: Record<string, unknown>) => (r.tools as { function: { name: string } }[]).map((t) => t.function.name);
  const userCount = (r: Record<string, unknown>) => (r.messages as { role: string }[]).filter((m) => m.role === 'user').length - 1;
  for (const r of requests) for (const n of names) assert.equal(offered(r).includes(n), userCount(r) >= revealTurn, `${n} at user turn ${userCount(r)}`);
  // Tool results come back as tool messages answering each call id.
  const later = requests.at(-1) as { messages: { role: string; tool_call_id?: string; tool_calls?: { id: string }[] }[] };
  const ids = later.messages.flatMap((m) => m.tool_calls?.map((c) => c.id) ?? []);
  const answered = later.messages.filter((m) => m.role === 'tool').map((m) => m.tool_call_id);
  assert.deepEqual(answered, ids);
});
