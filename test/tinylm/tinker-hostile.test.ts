/**
 * `serve --tinker` against one hostile key holder (issue 68): every attack that took the server down,
 * locked others out or broke a model, kept as a test against the real server in its own process (one
 * for the file). Protobuf bodies of millions of empty elements are refused before decoding, in a
 * fraction of the time decoding took; one call's tokens are bounded; training lets /health answer;
 * hostile values leave the weights as they were; client mistakes are the client's; request ids are
 * unguessable.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { encodeForwardBackward, PROTOBUF } from '../../src/policy/tinker/proto-codec.ts';
import { countProto, forwardBackwardRequestShape, ProtoCountError } from '../../src/policy/tinker/proto-count.ts';
import { floats, ints, tokensInput, type ForwardBackwardRequest } from '../../src/policy/tinker/wire.ts';
import { zstdCompress } from '../../src/policy/tinker/zstd.ts';
import { SavedFullError, SavedStates } from '../../src/tinylm/tinker-server/saved.ts';
import { startServe } from '../helpers/run-cli.ts';
import { fixture, writeTemp } from './fixtures.ts';

// A smaller model than the other tinylm tests' (one layer, width 16): the trainer's grids stay 4,096
// positions (the in-process trainer's, so updates agree), and each takes a fraction of the /health bound
// even on a loaded machine.
const file = writeTemp(fixture({ dim: 16, ffn: 32, layers: 1, heads: 2 }).model, 'tiny.gguf');
const dir = mkdtempSync(join(tmpdir(), 'tinker-hostile-'));
const keyFile = join(dir, 'key');
const KEY = 'tml-hostile-key-0123';
writeFileSync(keyFile, `${KEY}\n`);
/**
 * The decoded bound the bombs are sized to. The attack was sized to the default, 64 MiB (33.5 M
 * datums); a quarter of it is the same attack (8.4 M datums, over a gigabyte of objects decoded) at a
 * quarter of the test's time.
 */
const DECODED = 16 << 20;
/** One optim_step's tokens: sixteen of the trainer's grids (4,096 positions each). */
const CALL_TOKENS = 1 << 16;
let child: ChildProcess;
let root = '';

before(async () => {
  ({ child, baseURL: root } = await startServe(file, [
    '--tinker',
    '--tinker-key-file',
    keyFile,
    '--tinker-max-call-tokens',
    String(CALL_TOKENS),
    '--max-decoded-bytes',
    String(DECODED),
    '--tinker-max-saves',
    '3',
    '--tinker-max-futures',
    '8',
    '--tinker-keep-saves',
    '2',
  ]));
  root = root.replace(/\/v1$/, '');
});
after(() => child.kill('SIGTERM'));

const send = (path: string, body: string | Uint8Array, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
  fetch(`${root}/api/v1/${path}`, { method: 'POST', headers: { 'x-api-key': KEY, ...headers }, body: body as BodyInit });
const post = async (path: string, body: unknown) => {
  const res = await send(path, JSON.stringify(body));
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};
/** A future's outcome (its result, or `{error, category}`), polled through try_again. */
async function outcome(future: Record<string, unknown>): Promise<Record<string, unknown>> {
  for (;;) {
    const r = await post('retrieve_future', { request_id: future.request_id });
    if (r.body.type !== 'try_again') return r.body;
  }
}
const call = async (path: string, body: unknown) => {
  const r = await post(path, body);
  assert.equal(r.status, 200, `${path}: ${JSON.stringify(r.body)}`);
  return outcome(r.body);
};
const newModel = async () => (await call('create_model', { session_id: 's', base_model: 'tiny' })).model_id as string;
const message = (body: Record<string, unknown>) => (body.error as { message: string }).message;
const health = async () => (await fetch(`${root}/health`)).status;

const datum = (tokens: number[], advantage: number, logprob = -1) => ({
  model_input: tokensInput(tokens),
  loss_fn_inputs: {
    target_tokens: ints([...tokens.slice(1), 5]),
    logprobs: floats(tokens.map((_, t) => (t === tokens.length - 1 ? logprob : 0))),
    advantages: floats(tokens.map((_, t) => (t === tokens.length - 1 ? advantage : 0))),
  },
});
const fbRequest = (modelId: string, data: ReturnType<typeof datum>[], lossFn = 'importance_sampling'): ForwardBackwardRequest => ({
  model_id: modelId,
  seq_id: 1,
  forward_backward_input: { data, loss_fn: lossFn, loss_fn_config: null },
});
const adam = (learningRate: number) => ({ learning_rate: learningRate, eps: 1e-8 });

/** A varint's bytes. */
function varint(n: number): number[] {
  const out = [];
  while (n >= 0x80) {
    out.push((n % 0x80) | 0x80);
    n = Math.floor(n / 0x80);
  }
  return [...out, n];
}
/** `count` copies of `element` after `prefix`: the shape of every bomb below (copies doubled, not looped). */
function repeated(prefix: number[], element: number[], count: number): Uint8Array {
  const out = new Uint8Array(prefix.length + element.length * count);
  out.set(prefix);
  out.set(element, prefix.length);
  for (let done = element.length; done < element.length * count; done *= 2)
    out.copyWithin(prefix.length + done, prefix.length, prefix.length + Math.min(done, element.length * count - done));
  return out;
}

/** A zstd body that is `body` compressed (a few kilobytes for each bomb below). */
async function bomb(body: Uint8Array): Promise<Uint8Array> {
  const bytes = await zstdCompress(body);
  assert.ok(bytes.length < 16 << 10, `${bytes.length} bytes on the wire`);
  return bytes;
}

async function refusedProto(bytes: Uint8Array, field: RegExp): Promise<void> {
  const res = await send('forward_backward', bytes, { 'content-type': PROTOBUF, 'content-encoding': 'zstd' });
  const answer = (await res.json()) as Record<string, unknown>;
  assert.equal(res.status, 400, JSON.stringify(answer));
  assert.match(message(answer), field);
  assert.match(message(answer), /refused before decoding/);
  assert.match((answer.error as { param: string }).param, /^data\[/, 'the field, as the param');
}

test('protobuf bombs: 8.4 M empty datums, one datum of 8.4 M empty chunks, a tensor shape of 16 M dims — each 400 naming the field, before decoding; the server lives on', async () => {
  // Built before the first request: compressing 64 MiB holds this process's event loop for seconds,
  // long enough for the server to close an idle keep-alive socket under the client.
  // Field 3 (data), length 0: two bytes per Datum, just under the decoded bound.
  const datums = await bomb(repeated([], [0x1a, 0x00], (DECODED - 2) / 2));
  // One Datum whose field 1 (model_input) repeats an empty Chunk.
  const count = (DECODED - 16) / 2;
  const chunks = await bomb(repeated([0x1a, ...varint(count * 2)], [0x0a, 0x00], count));
  // One Datum, one loss_fn_inputs entry whose Tensor's packed shape (field 4) holds one-byte varints.
  const dims = DECODED - 64;
  const tensor = [0x22, ...varint(dims)];
  const entry = [0x0a, 0x01, 0x61, 0x12, ...varint(tensor.length + dims)];
  const datumHead = [0x12, ...varint(entry.length + tensor.length + dims)];
  const shape = await bomb(
    repeated([0x1a, ...varint(datumHead.length + entry.length + tensor.length + dims), ...datumHead, ...entry, ...tensor], [0x01], dims),
  );

  const id = await newModel();
  await refusedProto(datums, /^protobuf forward_backward: data\[4096\]: more than 4,096 elements/);
  await refusedProto(chunks, /data\[0\]\.model_input\[64\]: more than 64 elements/);
  await refusedProto(shape, /data\[0\]\.loss_fn_inputs\[0\]\.value\.shape.*more than 8 elements/);
  assert.equal(await health(), 200);
  // The model still trains.
  await call('forward_backward', fbRequest(id, [datum([2, 7, 11], 0.5)]));
  assert.equal((await call('optim_step', { model_id: id, adam_params: adam(0) })).type, 'optim_step');
});

test('a body that is not zstd is 400 (not 413); a zstd frame declaring more than the bound is 413 naming --max-decoded-bytes', async () => {
  const junk = await send('forward_backward', new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]), { 'content-type': PROTOBUF, 'content-encoding': 'zstd' });
  assert.equal(junk.status, 400);
  assert.match(message((await junk.json()) as Record<string, unknown>), /not a zstd frame/);
  const big = await send('forward_backward', await zstdCompress(new Uint8Array(DECODED + 1)), { 'content-type': PROTOBUF, 'content-encoding': 'zstd' });
  assert.equal(big.status, 413);
  assert.match(message((await big.json()) as Record<string, unknown>), /--max-decoded-bytes/);
});

/** `n` datums of `length` tokens each (ids cycle through the fixture's vocabulary), every last token trained. */
const longData = (n: number, length: number) =>
  Array.from({ length: n }, (_, k) =>
    datum(
      Array.from({ length }, (_, t) => 2 + ((t * 7 + k) % 200)),
      k % 2 ? 0.5 : -0.5,
    ),
  );

test('one call’s work is bounded: a forward_backward past --tinker-max-call-tokens is 413, pending tokens past it 429; a maximal optim_step lets /health answer', async () => {
  const id = await newModel();
  // A first step of the same row length compiles the trainer's programs (once per process, not the bound's concern).
  await call('forward_backward', fbRequest(id, longData(1, 256)));
  await call('optim_step', { model_id: id, adam_params: adam(1e-3) });
  const over = await post('forward_backward', fbRequest(id, longData(CALL_TOKENS / 256 + 1, 256)));
  assert.equal(over.status, 413);
  assert.match(message(over.body), /--tinker-max-call-tokens/);
  // Four calls of a quarter each fill the model's next optim_step; one more token is refused.
  const quarter = longData(CALL_TOKENS / 4 / 256, 256);
  for (let i = 0; i < 4; i++) await call('forward_backward', fbRequest(id, quarter));
  const pending = await post('forward_backward', fbRequest(id, [datum([2, 7], 0.5)]));
  assert.equal(pending.status, 429);
  assert.match(message(pending.body), /--tinker-max-call-tokens/);

  const step = await post('optim_step', { model_id: id, adam_params: adam(1e-3) });
  assert.equal(step.status, 200);
  let done = false;
  const result = outcome(step.body).finally(() => (done = true));
  const times: number[] = [];
  while (!done) {
    const started = performance.now();
    assert.equal(await health(), 200);
    times.push(performance.now() - started);
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal((await result).type, 'optim_step');
  // A liveness bound with a wide margin: without the trainer's turns between grids, /health waited for the whole step.
  assert.ok(times.length >= 3, `the step ended before /health was asked three times (${times.length})`);
  assert.ok(Math.max(...times) < 1000, `/health took ${times.map((t) => t.toFixed(0)).join(', ')} ms while the step ran`);
});

test('client mistakes are the client’s: an empty sampling prompt is 400; request ids are unguessable', async () => {
  const empty = await post('asample', { prompt: { chunks: [] }, num_samples: 1, sampling_params: { max_tokens: 2 } });
  assert.equal(empty.status, 400);
  assert.match(message(empty.body), /^prompt: no tokens/);
  const id = await newModel();
  const ids = [];
  for (let i = 0; i < 2; i++) ids.push((await post('optim_step', { model_id: id, adam_params: adam(0) })).body.request_id as string);
  for (const r of ids) assert.match(r, /^req-[0-9a-f]{32}$/);
  for (const r of ids) await outcome({ request_id: r });
});

test('hostile values cannot turn a model’s weights into NaN: the learning rate and advantages are bounded, and a step whose gradient is not finite is refused with the weights unchanged', async () => {
  const id = await newModel();
  const probe = fbRequest(id, [datum([2, 7, 11, 13], 0)]);
  const logprobs = async () => ((await call('forward_backward', probe)).loss_fn_outputs as { logprobs: { data: number[] } }[])[0]!.logprobs.data;
  const before = await logprobs();
  await call('optim_step', { model_id: id, adam_params: adam(0) });

  const lr = await post('optim_step', { model_id: id, adam_params: adam(1e30) });
  assert.equal(lr.status, 400);
  assert.match(message(lr.body), /adam_params\.learning_rate/);
  const huge = await post('forward_backward', fbRequest(id, [datum([2, 7, 11], 1e39)], 'ppo'));
  assert.equal(huge.status, 400);
  assert.match(message(huge.body), /advantages/);
  // Within every bound, yet exp(log π − log π_old) overflows float32: the gradient is not finite.
  await call('forward_backward', fbRequest(id, [datum([2, 7, 11], -1, -1e30)], 'ppo'));
  const refused = await call('optim_step', { model_id: id, adam_params: adam(1e-2) });
  assert.equal(refused.category, 'user', JSON.stringify(refused));
  assert.match(refused.error as string, /not finite.*weights are unchanged/);
  const after = await logprobs();
  assert.deepEqual(after, before);
  assert.ok(after.every(Number.isFinite));
  await call('optim_step', { model_id: id, adam_params: adam(0) });
});

test('saved states are bounded across models: an unloaded model’s saves are deleted (no state folder), and past --tinker-max-saves a save is 507', async () => {
  const a = await newModel();
  const aState = (await call('save_weights', { model_id: a, path: 'a-0' })).path as string;
  await call('save_weights_for_sampler', { model_id: a, path: 'a-0' });
  await call('unload_model', { model_id: a });
  const b = await newModel();
  const gone = await post('load_weights', { model_id: b, path: aState, optimizer: true });
  assert.equal(gone.status, 404, 'a’s saves went with it');
  // Three saves fill the server (a's two are gone); every one belongs to a loaded model, so the fourth is refused.
  for (let i = 0; i < 2; i++) await call('save_weights', { model_id: b, path: `b-${i}` });
  const c = await newModel();
  await call('save_weights', { model_id: c, path: 'c-0' });
  const full = await post('save_weights_for_sampler', { model_id: c, path: 'c-0' });
  assert.equal(full.status, 507);
  assert.match(message(full.body), /--tinker-max-saves/);
  // Saving under a name already kept replaces it: no new room is needed.
  assert.match((await call('save_weights', { model_id: c, path: 'c-0' })).path as string, /c-0$/);
  await call('unload_model', { model_id: b });
  await call('save_weights_for_sampler', { model_id: c, path: 'c-0' });
  await call('unload_model', { model_id: c });
});

test('with a state folder, an unloaded model’s saves are kept until room is needed, and then go first, oldest first', () => {
  const folder = mkdtempSync(join(tmpdir(), 'tinker-saves-'));
  const loaded = new Set(['old', 'live']);
  const saved = new SavedStates(folder, { keepPerModel: 8, maxSaves: 3, isLoaded: (m) => loaded.has(m) });
  const bytes = new Uint8Array([1, 2, 3]);
  const old0 = saved.save('weights', 'old', 'x0', bytes);
  const old1 = saved.save('weights', 'old', 'x1', bytes);
  const live0 = saved.save('weights', 'live', 'y0', bytes);
  assert.throws(() => saved.save('weights', 'live', 'y1', bytes), SavedFullError);
  assert.equal(readdirSync(folder).filter((f) => f !== 'index.json').length, 3, 'a refused save writes nothing');
  loaded.delete('old');
  const live1 = saved.save('weights', 'live', 'y1', bytes);
  assert.equal(saved.file(old0, 'weights'), undefined, 'the oldest save of the unloaded model went');
  for (const p of [old1, live0, live1]) assert.ok(saved.file(p, 'weights'));
  assert.equal(readdirSync(folder).filter((f) => f !== 'index.json').length, 3);
  // The index outlives the object: a server restarted on the folder finds the same three.
  const again = new SavedStates(folder, { keepPerModel: 8, maxSaves: 3, isLoaded: () => false });
  assert.equal(again.size, 3);
});

test('fair shares: one model’s unretrieved results or one client’s new sampling sessions take at most a quarter, so other runs keep room', async () => {
  const [a, b] = [await newModel(), await newModel()];
  // --tinker-max-futures 8: a quarter is 2.
  const waiting = [];
  for (let i = 0; i < 2; i++) waiting.push((await post('optim_step', { model_id: a, adam_params: adam(0) })).body);
  const third = await post('optim_step', { model_id: a, adam_params: adam(0) });
  assert.equal(third.status, 429);
  assert.match(message(third.body), /share of --tinker-max-futures/);
  assert.equal((await call('optim_step', { model_id: b, adam_params: adam(0) })).type, 'optim_step', 'another model is not locked out');
  for (const f of waiting) await outcome(f);

  const open = async (session: string) => {
    const r = await post('create_sampling_session', { session_id: session, sampling_session_seq_id: 0, base_model: 'tiny' });
    assert.equal(r.status, 200);
    return r.body.sampling_session_id as string;
  };
  const mine = await open('victim');
  for (let i = 0; i < 20; i++) await open('hog');
  const sample = await call('asample', {
    prompt: tokensInput([2, 7, 11]),
    num_samples: 1,
    sampling_params: { max_tokens: 2, seed: 1 },
    sampling_session_id: mine,
  });
  assert.equal((sample.sequences as unknown[]).length, 1, JSON.stringify(sample));
  for (const id of [a, b]) await call('unload_model', { model_id: id });
});

test('the wire counter: a real request’s tokens are summed; unknown fields, groups, cut bodies and the body-wide element bound are refused naming where', () => {
  const shape = forwardBackwardRequestShape({ datums: 4096, chunks: 64, tokens: 1 << 17, tensors: 16, spans: 1024, idBytes: 256 });
  const request = encodeForwardBackward(fbRequest('m', [datum([2, 7, 11], 1), datum([2, 7, 11, 13, 17], -1)]));
  assert.deepEqual(countProto(request, shape), { tokens: 8 });
  const refused = (bytes: Uint8Array | number[], pattern: RegExp, limits?: Parameters<typeof countProto>[2]) =>
    assert.throws(
      () => countProto(bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes), shape, limits),
      (e: unknown) => e instanceof ProtoCountError && pattern.test(e.message),
    );
  // Seventeen unknown varint fields (number 99) at the top: a newer peer's additions are taken, a flood is not.
  refused(repeated([], [0x98, 0x06, 0x00], 17), /^the message: more than 16 unknown fields/);
  refused([0x1b], /wire type 3/);
  refused([0x1a, 0x05, 0x0a], /runs past its message/);
  refused([0x1a], /ends inside a varint/);
  refused(request, /^data\[0\]\.loss_fn_inputs\[1\]\.value: more than 7 elements in the whole body/, { maxElements: 7, maxUnknownPerMessage: 16 });
});
