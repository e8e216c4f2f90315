/**
 * The official Tinker SDK's wire, replayed. test/data/tinker-sdk/rl-loop.jsonl is what the SDK (0.25.0,
 * its own RL loop: scripts/tinker-sdk-rl.py, run by scripts/tinker-sdk-run.sh) sent to `serve --tinker`
 * and what it got back, bytes as base64; rl-loop-result.json is what the SDK read from it (its losses).
 * CI cannot fetch the SDK, so the recording stands in for it:
 *  - our client, driven through the same loop against an engine that answers the recorded answers,
 *    sends what the SDK sent (forward_backward as zstd protobuf decoding to the same request, the same
 *    sampling and Adam fields) and reads the recorded protobuf answers as the SDK did (the same losses);
 *  - our server, a fresh `serve --tinker` on the same tiny LM, takes the SDK's recorded requests (its
 *    zstd protobuf bodies byte for byte but for the model id, which a new server draws anew) and
 *    answers each with the recorded status and shape, and forward_backward with the recorded losses.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { TinkerClient, tinkerWire as wire } from '../../../src/policy/tinker/index.ts';
import { decodeForwardBackward, decodeForwardBackwardOutput, decodeSampleResponse, PROTOBUF } from '../../../src/policy/tinker/proto-codec.ts';
import { zstdCompress, zstdDecompress } from '../../../src/policy/tinker/zstd.ts';
import { startServe } from '../../helpers/run-cli.ts';
import { fixture, writeTemp } from '../../tinylm/fixtures.ts';

interface Exchange {
  method: string;
  path: string;
  request: { headers: Record<string, string>; body: string };
  status: number;
  response: { headers: Record<string, string>; body: string };
}
const data = new URL('../../data/tinker-sdk/', import.meta.url);
const wireLog = readFileSync(new URL('rl-loop.jsonl', data), 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l) as Exchange);
const result = JSON.parse(readFileSync(new URL('rl-loop-result.json', data), 'utf8')) as {
  steps: Array<{ loss_fn: string; losses: number[]; reward_mean: number }>;
};
const bytes = (b64: string) => new Uint8Array(Buffer.from(b64, 'base64'));
const json = (b64: string) => JSON.parse(Buffer.from(b64, 'base64').toString()) as Record<string, unknown>;
const isProto = (h: Record<string, string>) => (h['content-type'] ?? '').startsWith(PROTOBUF);
const sent = (path: string) => wireLog.filter((x) => x.path === path);
/** The recorded answer a request_id finally got (after any try_again). */
const answerOf = (id: string) =>
  wireLog
    .filter(
      (x) =>
        x.path === '/api/v1/retrieve_future' &&
        json(x.request.body).request_id === id &&
        !(!isProto(x.response.headers) && json(x.response.body).type === 'try_again'),
    )
    .at(-1)!;
const fbAnswers = () => sent('/api/v1/forward_backward').map((x) => answerOf(json(x.response.body).request_id as string));

test('the recording: the SDK sent forward_backward as zstd protobuf and asked for protobuf results, and our codec reads both as the SDK did', async () => {
  const fb = sent('/api/v1/forward_backward');
  assert.equal(fb.length, 6);
  for (const x of fb) {
    assert.equal(x.request.headers['content-type'], PROTOBUF);
    assert.equal(x.request.headers['content-encoding'], 'zstd');
    const request = decodeForwardBackward(await zstdDecompress(bytes(x.request.body), 1 << 20));
    assert.ok(wire.forwardBackwardSchema.safeParse(request).success);
  }
  const losses = fbAnswers().map((a) => {
    assert.ok(isProto(a.response.headers), 'a protobuf forward_backward result');
    return decodeForwardBackwardOutput(bytes(a.response.body), 64).metrics['loss:sum']!;
  });
  const sdkLosses = result.steps.flatMap((s) => s.losses);
  losses.forEach((l, i) => assert.ok(Math.abs(l - sdkLosses[i]!) < 1e-9, `loss ${i}: ours ${l}, the SDK's ${sdkLosses[i]}`));
  // The SDK's loop learned: every step's second epoch has a lower loss than its first.
  for (const s of result.steps) assert.ok(s.losses[1]! < s.losses[0]! - 0.1, `${s.loss_fn}: ${s.losses}`);
});

// An engine that answers what the SDK got, per path in order; what our client sends is kept.
const ours: Array<{ path: string; headers: Record<string, string>; body: Uint8Array }> = [];
const replay = createServer(async (req, res) => {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const body = new Uint8Array(Buffer.concat(chunks));
  const path = req.url!;
  ours.push({ path, headers: req.headers as Record<string, string>, body });
  const send = (x: Exchange) => res.writeHead(x.status, x.response.headers).end(Buffer.from(x.response.body, 'base64'));
  if (path === '/api/v1/retrieve_future') {
    const answer = answerOf(JSON.parse(Buffer.from(body).toString()).request_id);
    if (isProto(answer.response.headers) && !(req.headers.accept ?? '').includes(PROTOBUF)) return res.writeHead(406).end('protobuf expected');
    return send(answer);
  }
  const n = ours.filter((x) => x.path === path).length - 1;
  const x = sent(path)[n];
  if (!x) return res.writeHead(404, { 'content-type': 'application/json' }).end('{"detail":"not in the recording"}');
  return send(x);
});
let replayURL = '';
before(async () => {
  await new Promise<void>((r) => replay.listen(0, '127.0.0.1', r));
  replayURL = `http://127.0.0.1:${(replay.address() as AddressInfo).port}`;
});
after(() => replay.close());

/** The SDK loop's datums (scripts/tinker-sdk-rl.py) from one prompt's sampled group. */
function groupDatums(prompt: number[], sequences: Array<{ tokens: number[]; logprobs?: number[] | null }>): wire.Datum[] {
  const rewards = sequences.map((s) => s.tokens.filter((t) => t < 60).length / s.tokens.length);
  const mean = rewards.reduce((a, b) => a + b, 0) / rewards.length;
  return sequences.map((s, i) => {
    const tokens = [...prompt, ...s.tokens];
    const skip = prompt.length - 1;
    return {
      model_input: wire.tokensInput(tokens.slice(0, -1)),
      loss_fn_inputs: {
        target_tokens: wire.ints(tokens.slice(1)),
        logprobs: wire.floats([...Array<number>(skip).fill(0), ...s.logprobs!]),
        advantages: wire.floats([...Array<number>(skip).fill(0), ...s.tokens.map(() => rewards[i]! - mean)]),
      },
    };
  });
}

test('our client, through the SDK’s loop, sends what the SDK sent and reads the SDK’s answers as it did', async () => {
  const client = new TinkerClient({ baseURL: replayURL, apiKey: 'tml-replay', heartbeatMs: 3_600_000 });
  try {
    const modelId = await client.createModel('tiny', 8);
    assert.equal(modelId, json(answerOf(json(sent('/api/v1/create_model')[0]!.response.body).request_id as string).response.body).model_id as string);
    const prompts = [
      [2, 7, 11],
      [3, 5, 13],
    ];
    const adam = { learning_rate: 0.01, beta1: 0.9, beta2: 0.95, eps: 1e-8, weight_decay: 0, grad_clip_norm: 0 };
    let path: string | undefined;
    const losses: number[] = [];
    for (let step = 0; step < 3; step++) {
      const lossFn = step % 2 === 0 ? 'importance_sampling' : 'ppo';
      const datums: wire.Datum[] = [];
      for (const [i, prompt] of prompts.entries()) {
        const s = await client.sample({
          prompt: wire.tokensInput(prompt),
          num_samples: 4,
          sampling_params: { max_tokens: 8, temperature: 1, seed: 1000 * step + i, top_k: -1, top_p: 1 },
          ...(path ? { model_path: path } : { base_model: 'tiny' }),
        });
        datums.push(...groupDatums(prompt, s.sequences));
      }
      for (let epoch = 0; epoch < 2; epoch++) {
        const out = await client.forwardBackward(modelId, datums, lossFn, lossFn === 'ppo' ? { clip_low_threshold: 0.8, clip_high_threshold: 1.2 } : undefined);
        losses.push(out.metrics['loss:sum']!);
        await client.optimStep(modelId, adam);
      }
      path = await client.saveForSampler(modelId, `step-${step}`);
    }
    assert.deepEqual(
      losses,
      result.steps.flatMap((s) => s.losses),
      'the losses the SDK read',
    );
  } finally {
    client.close();
  }

  // forward_backward: zstd protobuf (the recorded engine said proto_compress_fwdbwd), decoding to the SDK's request.
  const ourFb = ours.filter((x) => x.path === '/api/v1/forward_backward');
  const sdkFb = sent('/api/v1/forward_backward');
  assert.equal(ourFb.length, sdkFb.length);
  for (const [i, x] of ourFb.entries()) {
    assert.equal(x.headers['content-type'], PROTOBUF);
    assert.equal(x.headers['content-encoding'], 'zstd');
    const mine = decodeForwardBackward(await zstdDecompress(x.body, 1 << 20));
    const theirs = decodeForwardBackward(await zstdDecompress(bytes(sdkFb[i]!.request.body), 1 << 20));
    assert.deepEqual(mine, theirs, `forward_backward ${i}`);
  }
  // Sample and forward_backward results were asked for as protobuf, as the SDK asks (the replay engine answers 406 otherwise, failing the call).
  // Sampling: the same prompt and sampling fields (the SDK names its weights by sampling session, we by path).
  const ourSamples = ours.filter((x) => x.path === '/api/v1/asample').map((x) => JSON.parse(Buffer.from(x.body).toString()) as Record<string, unknown>);
  sent('/api/v1/asample').forEach((x, i) => {
    const theirs = json(x.request.body);
    assert.deepEqual(ourSamples[i]!.prompt, theirs.prompt);
    assert.equal(ourSamples[i]!.num_samples, theirs.num_samples);
    const [a, b] = [ourSamples[i]!.sampling_params as Record<string, unknown>, theirs.sampling_params as Record<string, unknown>];
    for (const k of ['max_tokens', 'seed', 'temperature', 'top_k', 'top_p']) assert.equal(a[k], b[k], `asample ${i}: ${k}`);
  });
  // optim_step and save_weights_for_sampler: the SDK's fields, its seq_ids (1 per training client, counting every call).
  for (const p of ['/api/v1/optim_step', '/api/v1/save_weights_for_sampler']) {
    const mine = ours.filter((x) => x.path === p).map((x) => JSON.parse(Buffer.from(x.body).toString()) as Record<string, unknown>);
    sent(p).forEach((x, i) => {
      const theirs = json(x.request.body);
      for (const k of Object.keys(theirs).filter((k) => k !== 'ttl_seconds')) assert.deepEqual(mine[i]![k], theirs[k], `${p} ${i}: ${k}`);
    });
  }
});

let child: ChildProcess | undefined;
after(() => child?.kill('SIGTERM'));

test('our server takes the SDK’s recorded requests and answers each as it answered the SDK: status, shape, losses', async () => {
  const file = writeTemp(fixture().model, 'tiny.gguf');
  const keyFile = `${file}.key`;
  writeFileSync(keyFile, 'tml-replay-key-0123\n');
  const served = await startServe(file, ['--tinker', '--tinker-key-file', keyFile]);
  child = served.child;
  const root = served.baseURL.replace(/\/v1$/, '');
  /** Recorded id → the live server's (session, model, sampling session, request ids and saved paths). */
  const ids = new Map<string, string>();
  // Every id in one pass, longest first: the recording's request ids are sequential (req-1 is a prefix of
  // req-10), and a live id may hold a recorded one (req-9c98… holds req-9), so swaps must not chain.
  const live = (text: string) => {
    if (ids.size === 0) return text;
    const pattern = [...ids.keys()].sort((a, b) => b.length - a.length).map((a) => a.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'));
    return text.replace(new RegExp(pattern.join('|'), 'g'), (a) => ids.get(a)!);
  };
  const learn = (recorded: unknown, got: unknown) => {
    if (typeof recorded === 'string' && typeof got === 'string' && recorded !== got) ids.set(recorded, got);
    else if (recorded && got && typeof recorded === 'object' && typeof got === 'object')
      for (const k of Object.keys(recorded)) learn((recorded as Record<string, unknown>)[k], (got as Record<string, unknown>)[k]);
  };
  const post = async (x: Exchange, body: Uint8Array | string) =>
    fetch(`${root}${x.path}`, {
      method: x.method,
      headers: { ...x.request.headers, 'x-api-key': 'tml-replay-key-0123' },
      ...(x.method === 'GET' ? {} : { body: body as BodyInit }),
    });
  const losses: number[] = [];
  for (const x of wireLog) {
    if (x.path === '/api/v1/retrieve_future') {
      const recordedAnswer = json(x.request.body).request_id as string;
      if (answerOf(recordedAnswer) !== x) continue; // a try_again poll of the SDK's: polled below until the answer
      let res: Response;
      for (;;) {
        res = await post(x, live(Buffer.from(x.request.body, 'base64').toString()));
        if (isProto({ 'content-type': res.headers.get('content-type') ?? '' })) break;
        const peek = (await res.clone().json()) as Record<string, unknown>;
        if (peek.type !== 'try_again') break;
      }
      assert.equal(res.status, x.status, `${x.path} ${recordedAnswer}`);
      assert.equal(res.headers.get('content-type')?.startsWith(PROTOBUF), isProto(x.response.headers), `${recordedAnswer}: protobuf as recorded`);
      const got = new Uint8Array(await res.arrayBuffer());
      if (isProto(x.response.headers)) {
        const recorded = bytes(x.response.body);
        if (sent('/api/v1/forward_backward').some((f) => json(f.response.body).request_id === recordedAnswer)) {
          const [a, b] = [decodeForwardBackwardOutput(got, 64), decodeForwardBackwardOutput(recorded, 64)];
          assert.equal(a.loss_fn_outputs.length, b.loss_fn_outputs.length);
          assert.ok(Math.abs(a.metrics['loss:sum']! - b.metrics['loss:sum']!) < 1e-4, `loss ${a.metrics['loss:sum']} vs ${b.metrics['loss:sum']}`);
          losses.push(a.metrics['loss:sum']!);
        } else {
          const [a, b] = [decodeSampleResponse(got), decodeSampleResponse(recorded)];
          assert.deepEqual(
            a.sequences.map((s) => [s.tokens.length, s.logprobs?.length, s.stop_reason]),
            b.sequences.map((s) => [s.tokens.length, s.logprobs?.length, s.stop_reason]),
          );
        }
      } else {
        const [a, b] = [JSON.parse(Buffer.from(got).toString()), json(x.response.body)];
        assert.deepEqual(Object.keys(a).sort(), Object.keys(b).sort(), `${recordedAnswer}: the answer's fields`);
        learn(b, a);
      }
      continue;
    }
    let body: Uint8Array | string = live(Buffer.from(x.request.body, 'base64').toString());
    if (isProto(x.request.headers)) {
      // The SDK's bytes, with the recorded model id swapped for the live one (same length), compressed again.
      // Only ids the body carries are swapped (request ids, random since, never ride in a request body).
      let swapped = Buffer.from(await zstdDecompress(bytes(x.request.body), 1 << 20));
      for (const [a, b] of ids) {
        if (!swapped.toString('latin1').includes(a)) continue;
        assert.equal(a.length, b.length, `ids of one form: ${a} / ${b}`);
        swapped = Buffer.from(swapped.toString('latin1').split(a).join(b), 'latin1');
      }
      body = await zstdCompress(new Uint8Array(swapped));
    }
    const res = await post(x, body);
    assert.equal(res.status, x.status, `${x.path}: ${res.status} (recorded ${x.status})`);
    const a = (await res.json()) as Record<string, unknown>;
    const b = json(x.response.body);
    // Since the recording the server's client config also offers retrieve_futures (a flag SDK 0.25.0 ignores),
    // and its asample future names the sequences (SDK 0.26+ refuses one without; 0.25.0 ignores the field).
    const added = { '/api/v1/client/config': ['sample_use_retrieve_futures'], '/api/v1/asample': ['sample_sequence_ids'] }[x.path] ?? [];
    assert.deepEqual(Object.keys(a).sort(), [...Object.keys(b), ...added].sort(), `${x.path}: the answer's fields`);
    learn(b, a);
  }
  assert.equal(losses.length, 6);
  const sdkLosses = result.steps.flatMap((s) => s.losses);
  losses.forEach((l, i) => assert.ok(Math.abs(l - sdkLosses[i]!) < 1e-4, `loss ${i}: ${l} vs the SDK's ${sdkLosses[i]}`));
});
