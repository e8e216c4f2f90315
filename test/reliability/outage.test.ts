/**
 * A short server outage (a restart, a load balancer failing over) must not fail a step at the default
 * retry settings: with 3 attempts 200 ms apart, every trajectory in flight during a 1.5 s outage gave
 * up (end = error) after about half a second. The defaults now wait at least 3 s in total before the
 * last attempt. Two real outages: the port refuses connections for 1.5 s, then a server comes up on
 * it; and a server that answers 500 for 1.5 s, then recovers.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WorldEnv } from '../../src/env/index.ts';
import { startFaultServer, type FaultServer } from '../../src/faults/index.ts';
import { OpenAIPolicy } from '../../src/policy/index.ts';
import { runStep, engineSettings } from '../../src/rollout/index.ts';
import { leaves, type RolloutTree } from '../../src/tree/index.ts';
import { createRng } from '../../src/util/rng.ts';

const OUTAGE_MS = 1_500;
const env = new WorldEnv({ seed: 3, questions: 200 });
const prompts = env.train.slice(0, 4);

/** Leaves that ended in an error, and all leaves. */
function ends(trees: RolloutTree[]): { errors: number; leaves: number } {
  const all = trees.flatMap((t) => leaves(t));
  return { errors: all.filter((l) => l.end === 'error').length, leaves: all.length };
}

/** One step at the default engine settings (only the turn limit lowered, to keep it short). */
async function step(baseURL: string) {
  const policy = new OpenAIPolicy({ baseURLs: [baseURL], model: 'm' });
  return runStep({
    prompts,
    env,
    policy,
    rng: createRng(1),
    rootPlan: new Map(prompts.map((p) => [p.id, 2])),
    settings: { maxTurns: 3 },
  });
}

test('the default retries wait at least 3 s in total before giving up', () => {
  const { retry } = engineSettings();
  let least = 0;
  for (let a = 1; a < retry.maxAttempts; a++) least += Math.min(retry.maxDelayMs, retry.baseDelayMs * 2 ** (a - 1)) * (1 - retry.jitter);
  assert.ok(least >= 2 * OUTAGE_MS, `least total backoff ${least} ms`);
});

test('a port that refuses connections for 1.5 s, then serves: no trajectory fails', async () => {
  // A free port, closed again: connections to it are refused until the server below takes it.
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((r) => probe.close(() => r()));
  let server: FaultServer | undefined;
  const up = new Promise<void>((resolve, reject) =>
    setTimeout(() => {
      startFaultServer({ rate: 0, port }).then((s) => {
        server = s;
        resolve();
      }, reject);
    }, OUTAGE_MS),
  );
  try {
    const res = await step(`http://127.0.0.1:${port}/v1`);
    await up;
    assert.deepEqual(res.failures, {}, 'nothing failed after the retries');
    const e = ends(res.trees);
    assert.equal(e.errors, 0);
    assert.equal(e.leaves, 8);
    assert.ok(server!.requests() >= 8, 'the trajectories reached the server once it was up');
  } finally {
    await up.catch(() => {});
    await server?.close();
  }
});

test('a server answering 500 for 1.5 s, then recovering: no trajectory fails', async () => {
  const healthy = await startFaultServer({ rate: 0 });
  let outageEnds = 0;
  let refused = 0;
  // The outage starts with the first request: every trajectory's first attempt meets it.
  const front = createServer((req: IncomingMessage, res: ServerResponse) => {
    outageEnds ||= Date.now() + OUTAGE_MS;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (Date.now() < outageEnds) {
        refused++;
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"message":"restarting"}}');
        return;
      }
      fetch(`${healthy.url}${req.url!.replace(/^\/v1/, '')}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.concat(chunks) })
        .then(async (r) => res.writeHead(r.status, { 'content-type': 'application/json' }).end(await r.text()))
        .catch(() => res.writeHead(502).end());
    });
  });
  await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
  try {
    const res = await step(`http://127.0.0.1:${(front.address() as AddressInfo).port}/v1`);
    assert.ok(refused >= 8, `every trajectory met the outage (${refused} requests answered 500)`);
    assert.deepEqual(res.failures, {});
    assert.equal(ends(res.trees).errors, 0);
  } finally {
    front.closeAllConnections();
    await new Promise<void>((r) => front.close(() => r()));
    await healthy.close();
  }
});
