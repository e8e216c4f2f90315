/**
 * A trajectory that outgrows the model's context: the server refuses its next turn (vLLM's 400,
 * "This model's maximum context length is …"). It used to end as a server_error failure with no
 * reward, dropped from every target and advantage. Now it is kept, truncated at its last turn that
 * fit, marked end = 'context' with reward 0, and the refused call is not retried. A prompt that does
 * not fit even alone leaves nothing to keep: an error with code context_overflow, tried once.
 * A real HTTP server in front of the project's fault server (healthy) stands in for vLLM.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WorldEnv } from '../../src/env/index.ts';
import { startFaultServer } from '../../src/faults/index.ts';
import { OpenAIPolicy } from '../../src/policy/index.ts';
import { runStep } from '../../src/rollout/index.ts';
import { leaves, treeFromJSON, treeToJSON } from '../../src/tree/index.ts';
import { createRng } from '../../src/util/rng.ts';

const VLLM_OVERFLOW =
  "This model's maximum context length is 4096 tokens. However, you requested 4610 tokens (4098 in the messages, 512 in the completion). Please reduce the length of the messages or completion.";

/** A vLLM-like server whose context is exceeded by any prompt `tooLong` says is too long. */
async function limitedServer(tooLong: (prompt: string) => boolean) {
  const healthy = await startFaultServer({ rate: 0 });
  const seen = { refused: 0, answered: 0 };
  const front = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { prompt?: string; messages?: Array<{ content: string }> };
      const prompt = body.prompt ?? (body.messages ?? []).map((m) => m.content).join('\n');
      if (tooLong(prompt)) {
        seen.refused++;
        res
          .writeHead(400, { 'content-type': 'application/json' })
          .end(JSON.stringify({ object: 'error', message: VLLM_OVERFLOW, type: 'BadRequestError', param: null, code: 400, error: { message: VLLM_OVERFLOW } }));
        return;
      }
      seen.answered++;
      fetch(`${healthy.url}${req.url!.replace(/^\/v1/, '')}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.concat(chunks) })
        .then(async (r) => res.writeHead(r.status, { 'content-type': 'application/json' }).end(await r.text()))
        .catch(() => res.writeHead(502).end());
    });
  });
  await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(front.address() as AddressInfo).port}/v1`,
    seen,
    close: async () => {
      front.closeAllConnections();
      await new Promise<void>((r) => front.close(() => r()));
      await healthy.close();
    },
  };
}

const env = new WorldEnv({ seed: 3, questions: 200 });
const prompts = env.train.slice(0, 3);

async function step(url: string) {
  return runStep({
    prompts,
    env,
    policy: new OpenAIPolicy({ baseURLs: [url], model: 'm' }),
    rng: createRng(1),
    rootPlan: new Map(prompts.map((p) => [p.id, 2])),
    settings: { maxTurns: 4, retry: { baseDelayMs: 1, maxDelayMs: 2 } },
  });
}

test('a trajectory whose next turn outgrows the context is kept up to its last turn, end context, reward 0, not retried', async () => {
  // The first turn fits; any prompt that already holds an observation (one more <information> block
  // than the instructions show) does not.
  const blocks = (text: string) => text.split('<information>').length;
  const instructions = blocks(env.render(prompts[0]!));
  const server = await limitedServer((p) => blocks(p) > instructions);
  try {
    const res = await step(server.url);
    const ends = res.trees.flatMap((t) => leaves(t));
    assert.equal(ends.length, 6, 'every trajectory is kept');
    for (const leaf of ends) {
      assert.equal(leaf.end, 'context', `${leaf.id} ends marked as out of context`);
      assert.equal(leaf.reward, 0, `${leaf.id} is a failure with reward 0`);
      assert.equal(leaf.depth, 1, 'truncated at the last turn that fit');
      assert.equal(leaf.turn!.error, undefined, 'the kept turn is a whole turn');
      assert.notEqual(leaf.turn!.observation, '', 'with its observation');
    }
    assert.deepEqual(res.failures, {}, 'no failure: the trajectories are kept');
    assert.equal(server.seen.refused, 6, 'one refused call per trajectory: no retry');
    // The stored form reads back (the tree schema knows the end reason).
    for (const t of res.trees) assert.deepEqual(treeFromJSON(treeToJSON(t)), t);
  } finally {
    await server.close();
  }
});

test('a prompt that does not fit even alone: an error with code context_overflow, tried once', async () => {
  const server = await limitedServer(() => true);
  try {
    const res = await step(server.url);
    const ends = res.trees.flatMap((t) => leaves(t));
    assert.equal(ends.length, 6);
    for (const leaf of ends) {
      assert.equal(leaf.end, 'error');
      assert.equal(leaf.turn!.error!.code, 'context_overflow');
      assert.match(leaf.turn!.error!.message, /maximum context length is 4096 tokens.*\(attempt 1 of 5\)/);
    }
    assert.deepEqual(res.failures, { context_overflow: 6 });
    assert.equal(server.seen.refused, 6);
  } finally {
    await server.close();
  }
});
