/**
 * The Tinker client and server against request/response vectors written from the official SDK's
 * source (sdk-vectors.json says which files): every SDK request body is one the server's schemas take,
 * and every body the client sends has the SDK's fields. The replay server below answers with the
 * recorded responses (and with injected faults); the real server is exercised end to end in
 * test/tinylm/tinker-serve.test.ts.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import type { z } from 'zod';
import { PolicyCallError } from '../../../src/policy/errors.ts';
import { TinkerClient, tinkerWire as wire } from '../../../src/policy/tinker/index.ts';
import { decodeSampleResponse, encodeSampleResponse } from '../../../src/policy/tinker/proto-codec.ts';
import { SessionFutures } from '../../../src/policy/tinker/session-futures.ts';

interface Vector {
  path: string;
  request: Record<string, unknown>;
  future?: Record<string, unknown>;
  response: Record<string, unknown>;
}
const file = JSON.parse(readFileSync(new URL('./sdk-vectors.json', import.meta.url), 'utf8')) as {
  vectors: Vector[];
  retrieve_future: { request: Record<string, unknown>; try_again: Record<string, unknown>; failed: Record<string, unknown> };
};
const byPath = new Map(file.vectors.map((v) => [v.path, v]));

const serverSchemas: Record<string, z.ZodType> = {
  '/api/v1/create_session': wire.createSessionSchema,
  '/api/v1/create_model': wire.createModelSchema,
  '/api/v1/asample': wire.sampleSchema,
  '/api/v1/forward_backward': wire.forwardBackwardSchema,
  '/api/v1/optim_step': wire.optimStepSchema,
  '/api/v1/save_weights_for_sampler': wire.modelIdSchema,
  '/api/v1/save_weights': wire.modelIdSchema,
  '/api/v1/load_weights': wire.loadWeightsSchema,
};

test('every SDK request vector is one the server’s schemas take, and every answer vector one the client’s take', () => {
  for (const v of file.vectors) {
    const r = serverSchemas[v.path]!.safeParse(v.request);
    assert.ok(r.success, `${v.path}: ${r.success ? '' : r.error.message}`);
  }
  assert.ok(wire.retrieveSchema.safeParse(file.retrieve_future.request).success);
  assert.ok(wire.sampleResponseSchema.safeParse(byPath.get('/api/v1/asample')!.response).success);
  assert.ok(wire.forwardBackwardOutputSchema.safeParse(byPath.get('/api/v1/forward_backward')!.response).success);
});

test('the current wire’s vectors (test/data/tinker-sdk/current-wire.json): the version, a finish and the prompt-cache count are taken by both ends, in JSON and protobuf', () => {
  const v = JSON.parse(readFileSync(new URL('../../data/tinker-sdk/current-wire.json', import.meta.url), 'utf8')) as Record<string, Record<string, unknown>> & {
    finish_session_requests: Record<string, unknown>[];
  };
  assert.equal(v.client_config_request!.sdk_version, wire.SDK_WIRE_VERSION);
  assert.equal(wire.createSessionSchema.parse(v.create_session_request).sdk_version, wire.SDK_WIRE_VERSION);
  for (const f of v.finish_session_requests) assert.ok(wire.finishSessionSchema.safeParse(f).success, JSON.stringify(f));
  assert.equal(wire.finishSessionSchema.safeParse({ reason: { type: 'exploded' } }).success, false);
  const sample = wire.sampleResponseSchema.parse(v.sample_response);
  assert.equal(sample.prompt_cache_hit_tokens, 3);
  assert.equal(decodeSampleResponse(encodeSampleResponse(sample)).prompt_cache_hit_tokens, 3, 'protobuf field 4 both ways');
});

test('a retrieve_futures answer of the SDK’s shape (finished and failed completions) releases the samples waiting on it, and the next poll sends its cursor', async () => {
  const v = JSON.parse(readFileSync(new URL('../../data/tinker-sdk/current-wire.json', import.meta.url), 'utf8')) as {
    retrieve_futures: { request: Record<string, unknown>; response: { completions: Array<{ request_id: string }>; cursor: number } };
  };
  const cursors: number[] = [];
  const futures = new SessionFutures({
    poll: async (cursor) => {
      cursors.push(cursor);
      return cursors.length === 1 ? v.retrieve_futures.response : { completions: [{ state: 'finished', request_id: 'req-9' }], cursor: 3 };
    },
    refuse: (m) => new PolicyCallError('server_error', m, false),
    attempts: 1,
    backoffMs: 1,
  });
  await Promise.all(['req-7', 'req-8'].map((id) => futures.wait(id)));
  await futures.wait('req-9');
  assert.deepEqual(cursors, [0, 2]);
  assert.deepEqual(Object.keys(v.retrieve_futures.request).sort(), ['prev_cursor', 'target', 'timeout']);
});

/** The shape of a JSON value: its keys and value types, recursively (arrays by their first element). */
function shape(v: unknown): unknown {
  if (Array.isArray(v)) return v.length ? [shape(v[0])] : [];
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.entries(v)
        .filter(([, x]) => x !== null)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, x]) => [k, shape(x)]),
    );
  return typeof v;
}

// The replay server: each path answers its vector's future, then retrieve_future answers the response.
// `faults` injects what a busy or broken server does, in order, before the recorded answer.
const sent: Array<{ path: string; body: Record<string, unknown>; key?: string }> = [];
let faults: Array<'try_again' | '503' | 'failed'> = [];
let pending: Record<string, unknown> | undefined;
const server = createServer(async (req, res) => {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const body = JSON.parse(Buffer.concat(chunks).toString()) as Record<string, unknown>;
  const path = req.url!;
  sent.push({ path, body, key: req.headers['x-api-key'] as string | undefined });
  const send = (status: number, x: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(x));
  if (path === '/api/v1/retrieve_future') {
    const fault = faults.shift();
    if (fault === 'try_again') return send(200, file.retrieve_future.try_again);
    if (fault === '503') return send(503, { detail: 'overloaded' });
    if (fault === 'failed') return send(200, { ...file.retrieve_future.failed, error: `bad key secret-key-42 for ${String(body.request_id)}` });
    return send(200, pending);
  }
  const v = byPath.get(path);
  if (!v) return send(404, { detail: 'no vector' });
  if (!v.future) return send(200, v.response);
  pending = v.response;
  return send(200, v.future);
});
let root = '';
before(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  root = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => server.close());

test('the client sends the SDK’s bodies with the key as X-API-Key, and reads the SDK’s answers', async () => {
  sent.length = 0;
  const c = new TinkerClient({ baseURL: root, apiKey: 'secret-key-42' });
  const id = await c.createModel('tiny', 32);
  assert.equal(id, 'model-0');
  const s = await c.sample({
    prompt: wire.tokensInput([1, 17, 23]),
    num_samples: 1,
    sampling_params: { max_tokens: 8, seed: 7, stop: ['</answer>'], temperature: 1, top_k: -1, top_p: 1 },
    base_model: 'tiny',
  });
  assert.deepEqual(s.sequences[0]!.tokens, [40, 41]);
  const datum = {
    model_input: wire.tokensInput([1, 17, 23]),
    loss_fn_inputs: { target_tokens: wire.ints([17, 23, 40]), logprobs: wire.floats([0, 0, -0.5]), advantages: wire.floats([0, 0, 0.5]) },
  };
  const out = await c.forwardBackward(id, [datum], 'ppo', { clip_low_threshold: 0.8, clip_high_threshold: 1.2 });
  assert.deepEqual(out.loss_fn_outputs[0]!.logprobs!.data, [-3.1, -2.9, -0.6]);
  await c.optimStep(id, { learning_rate: 1e-4, beta1: 0.9, beta2: 0.999, eps: 1e-8, weight_decay: 0, grad_clip_norm: 1 });
  assert.equal(await c.saveForSampler(id, 'step-1'), 'tinker://model-0/sampler_weights/step-1');
  assert.equal(await c.saveState(id, 'state-1'), 'tinker://model-0/weights/state-1');
  await c.loadState(id, 'tinker://model-0/weights/state-1');
  // These vectors are the pre-protobuf SDK's: the replay engine has no client config (404), so forward_backward went as JSON.
  assert.equal(sent.filter((x) => x.path === '/api/v1/client/config').length, 1, 'the client config is asked once');
  const submitted = sent.filter((x) => x.path !== '/api/v1/retrieve_future' && x.path !== '/api/v1/client/config');
  assert.deepEqual(
    submitted.map((x) => x.path),
    file.vectors.map((v) => v.path),
  );
  for (const x of submitted) {
    assert.equal(x.key, 'secret-key-42');
    // The SDK's optional fields (LoRA flags, top-k prompt logprobs) may be left out; every field sent is the SDK's, of its type.
    const want = shape(byPath.get(x.path)!.request) as Record<string, unknown>;
    const got = shape(x.body) as Record<string, unknown>;
    for (const [k, v] of Object.entries(got)) assert.deepEqual(v, want[k] === undefined ? v : want[k], `${x.path}: field ${k}`);
    for (const k of Object.keys(want)) if (!['lora_config', 'topk_prompt_logprobs', 'sdk_version'].includes(k)) assert.ok(k in got, `${x.path}: sends ${k}`);
  }
  assert.deepEqual(
    sent.filter((x) => x.path === '/api/v1/retrieve_future').map((x) => shape(x.body)),
    sent.filter((x) => x.path === '/api/v1/retrieve_future').map(() => shape(file.retrieve_future.request)),
  );
});

test('faults: try_again and a 503 on the poll are polled through (as the SDK does), a failed future is a non-retryable error with the key blanked', async () => {
  const c = new TinkerClient({ baseURL: root, apiKey: 'secret-key-42' });
  faults = ['try_again', 'try_again'];
  assert.equal(await c.saveState('model-0', 'state-1'), 'tinker://model-0/weights/state-1');
  faults = ['503'];
  assert.equal(await c.saveState('model-0', 'state-1'), 'tinker://model-0/weights/state-1');
  assert.equal(faults.length, 0, 'the 503 was answered');
  faults = ['failed'];
  await assert.rejects(
    c.saveState('model-0', 'state-1'),
    (e: unknown) => e instanceof PolicyCallError && !e.retryable && /\[API key\]/.test(e.message) && !e.message.includes('secret-key-42'),
  );
  faults = [];
});

test('an engine that says it serves the current SDK but refuses a protobuf body (415) gets the chunk again as JSON, and JSON from then on', async () => {
  const seen: Array<{ path: string; type: string }> = [];
  const engine = createServer(async (req, res) => {
    for await (const _ of req);
    const type = String(req.headers['content-type']);
    seen.push({ path: req.url!, type });
    const send = (status: number, x: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(x));
    if (req.url === '/api/v1/client/config') return send(200, { proto_compress_fwdbwd: true });
    if (req.url === '/api/v1/forward_backward' && type !== 'application/json') return send(415, { detail: 'JSON only' });
    if (req.url === '/api/v1/forward_backward') return send(200, byPath.get('/api/v1/forward_backward')!.future);
    return send(200, byPath.get('/api/v1/forward_backward')!.response);
  });
  await new Promise<void>((r) => engine.listen(0, '127.0.0.1', r));
  try {
    const c = new TinkerClient({ baseURL: `http://127.0.0.1:${(engine.address() as AddressInfo).port}`, apiKey: 'k' });
    const datum = {
      model_input: wire.tokensInput([1, 17, 23]),
      loss_fn_inputs: { target_tokens: wire.ints([17, 23, 40]), logprobs: wire.floats([0, 0, -0.5]), advantages: wire.floats([0, 0, 0.5]) },
    };
    for (let i = 0; i < 2; i++) assert.deepEqual((await c.forwardBackward('model-0', [datum], 'ppo')).loss_fn_outputs[0]!.logprobs!.data, [-3.1, -2.9, -0.6]);
    assert.deepEqual(
      seen.filter((x) => x.path !== '/api/v1/retrieve_future'),
      [
        { path: '/api/v1/client/config', type: 'application/json' },
        { path: '/api/v1/forward_backward', type: 'application/x-protobuf' },
        { path: '/api/v1/forward_backward', type: 'application/json' },
        { path: '/api/v1/forward_backward', type: 'application/json' },
      ],
    );
  } finally {
    engine.close();
  }
});
