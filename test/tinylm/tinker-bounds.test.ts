/**
 * `serve --tinker` at its edges: the SDK's protobuf body (plain and zstd) and protobuf results, what it
 * refuses (other encodings and types, a zstd bomb, a broken message), the bounds on what a key holder
 * can take (models, datums pending, futures, sampler engines), the key, and saved states that outlive
 * the server (`--tinker-state-dir`) and other models' saves. One server with small limits, restarted
 * once on the same state folder.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { decodeForwardBackwardOutput, encodeForwardBackward, PROTOBUF } from '../../src/policy/tinker/proto-codec.ts';
import { floats, ints, tokensInput, type ForwardBackwardRequest } from '../../src/policy/tinker/wire.ts';
import { zstdCompress } from '../../src/policy/tinker/zstd.ts';
import type { LlamaEngine } from '../../src/tinylm/llama-engine.ts';
import { Samplers, SamplersBusyError } from '../../src/tinylm/tinker-server/samplers.ts';
import { startServe } from '../helpers/run-cli.ts';
import { fixture, writeTemp } from './fixtures.ts';

const file = writeTemp(fixture().model, 'tiny.gguf');
const dir = mkdtempSync(join(tmpdir(), 'tinker-bounds-'));
const stateDir = join(dir, 'state');
const keyFile = join(dir, 'key');
const KEY = 'tml-bounds-key-0123';
writeFileSync(keyFile, `${KEY}\n`);
const LIMITS = [
  '--tinker-max-models',
  '3',
  '--tinker-max-pending-datums',
  '4',
  '--tinker-max-futures',
  '3',
  '--tinker-keep-saves',
  '2',
  '--max-decoded-bytes',
  '65536',
];
let child: ChildProcess;
let root = '';
let key = KEY;

before(async () => {
  ({ child, baseURL: root } = await startServe(file, ['--tinker', '--tinker-key-file', keyFile, '--tinker-state-dir', stateDir, ...LIMITS]));
  root = root.replace(/\/v1$/, '');
});
after(() => child.kill('SIGTERM'));

const send = (path: string, body: string | Uint8Array, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
  fetch(`${root}/api/v1/${path}`, { method: 'POST', headers: { 'x-api-key': key, ...headers }, body: body as BodyInit });
const post = async (path: string, body: unknown) => {
  const res = await send(path, JSON.stringify(body));
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};
/** A future's result (JSON), polled through try_again. */
async function result(future: Record<string, unknown>, accept?: string): Promise<Response> {
  for (;;) {
    const res = await send('retrieve_future', JSON.stringify({ request_id: future.request_id }), {
      'content-type': 'application/json',
      ...(accept ? { accept } : {}),
    });
    if (res.headers.get('content-type')?.startsWith(PROTOBUF)) return res;
    const peek = (await res.clone().json()) as Record<string, unknown>;
    if (peek.type !== 'try_again') return res;
  }
}
const call = async (path: string, body: unknown) => {
  const r = await post(path, body);
  assert.equal(r.status, 200, `${path}: ${JSON.stringify(r.body)}`);
  return (await (await result(r.body)).json()) as Record<string, unknown>;
};
const newModel = async () => (await call('create_model', { session_id: 's', base_model: 'tiny', lora_config: { rank: 8 } })).model_id as string;
const unload = (id: string) => call('unload_model', { model_id: id });

const datum = (advantage: number) => ({
  model_input: tokensInput([2, 7, 11]),
  loss_fn_inputs: { target_tokens: ints([7, 11, 5]), logprobs: floats([0, 0, -1]), advantages: floats([0, 0, advantage]) },
});
const fbRequest = (modelId: string, n: number): ForwardBackwardRequest => ({
  model_id: modelId,
  seq_id: 1,
  forward_backward_input: { data: Array.from({ length: n }, (_, i) => datum(0.5 - i)), loss_fn: 'importance_sampling', loss_fn_config: null },
});

test('forward_backward as the SDK’s protobuf, plain and zstd, is the JSON call: the same log-probabilities, answered as protobuf when asked', async () => {
  const answers = [];
  for (const encoding of ['json', 'protobuf', 'zstd'] as const) {
    const id = await newModel();
    const request = fbRequest(id, 2);
    const res =
      encoding === 'json'
        ? await send('forward_backward', JSON.stringify(request))
        : await send('forward_backward', encoding === 'zstd' ? await zstdCompress(encodeForwardBackward(request)) : encodeForwardBackward(request), {
            'content-type': PROTOBUF,
            ...(encoding === 'zstd' ? { 'content-encoding': 'zstd' } : {}),
          });
    assert.equal(res.status, 200, `${encoding}: ${await res.clone().text()}`);
    const out = await result((await res.json()) as Record<string, unknown>, PROTOBUF);
    assert.equal(out.headers.get('content-type'), PROTOBUF);
    answers.push(decodeForwardBackwardOutput(new Uint8Array(await out.arrayBuffer()), 8));
    await call('optim_step', { model_id: id, adam_params: { learning_rate: 0, eps: 1e-8 } });
    await unload(id);
  }
  assert.equal(answers[0]!.loss_fn_outputs.length, 2);
  assert.deepEqual(answers[1], answers[0]);
  assert.deepEqual(answers[2], answers[0]);
});

test('refused bodies: other encodings and types, a zstd bomb, a broken message, each with a status that says which', async () => {
  const id = await newModel();
  const proto = encodeForwardBackward(fbRequest(id, 1));
  assert.equal((await send('forward_backward', proto, { 'content-type': PROTOBUF, 'content-encoding': 'gzip' })).status, 415);
  assert.equal((await send('optim_step', proto, { 'content-type': PROTOBUF })).status, 415, 'protobuf only where the SDK sends it');
  assert.equal(
    (await send('forward_backward', JSON.stringify(fbRequest(id, 1)), { 'content-type': 'application/json', 'content-encoding': 'zstd' })).status,
    415,
  );
  // 64 MiB of zeros compress to a few kilobytes, far under the body limit; decoded, far over --max-decoded-bytes.
  const bomb = await zstdCompress(new Uint8Array(64 << 20));
  assert.ok(bomb.length < 1 << 20);
  const refused = await send('forward_backward', bomb, { 'content-type': PROTOBUF, 'content-encoding': 'zstd' });
  assert.equal(refused.status, 413);
  assert.match(((await refused.json()) as { error: { message: string } }).error.message, /--max-decoded-bytes/);
  assert.equal(
    (await send('forward_backward', new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]), { 'content-type': PROTOBUF, 'content-encoding': 'zstd' })).status,
    400,
    'not zstd at all: the client’s mistake, not a size',
  );
  const broken = await send('forward_backward', new Uint8Array([0x0a, 0xff, 0xff, 0x7f]), { 'content-type': PROTOBUF });
  assert.equal(broken.status, 400);
  assert.match(((await broken.json()) as { error: { message: string } }).error.message, /protobuf forward_backward/);
  // The server still works after all of them.
  const ok = await send('forward_backward', proto, { 'content-type': PROTOBUF });
  assert.equal(ok.status, 200);
  assert.equal((await result((await ok.json()) as Record<string, unknown>)).status, 200);
  await call('optim_step', { model_id: id, adam_params: { learning_rate: 0, eps: 1e-8 } });
  await unload(id);
});

test('bounds: models per server, datums pending per model, futures kept; each refusal names its flag, and freeing makes room', async () => {
  const models = [await newModel(), await newModel(), await newModel()];
  const full = await post('create_model', { session_id: 's', base_model: 'tiny' });
  assert.equal(full.status, 429);
  assert.match(JSON.stringify(full.body), /--tinker-max-models/);
  await unload(models.pop()!);
  models.push(await newModel());

  const [m] = models;
  const first = await post('forward_backward', fbRequest(m!, 3));
  assert.equal(first.status, 200);
  const over = await post('forward_backward', fbRequest(m!, 2));
  assert.equal(over.status, 429);
  assert.match(JSON.stringify(over.body), /--tinker-max-pending-datums/);
  await result(first.body);
  await call('optim_step', { model_id: m, adam_params: { learning_rate: 0, eps: 1e-8 } });
  await call('forward_backward', fbRequest(m!, 2));
  await call('optim_step', { model_id: m, adam_params: { learning_rate: 0, eps: 1e-8 } });

  // Three results left waiting, one per model (each model's share is a quarter, at least one), fill the
  // server's futures; the fourth call is refused until one is read.
  const waiting = [];
  for (const id of models) waiting.push((await post('optim_step', { model_id: id, adam_params: { learning_rate: 0, eps: 1e-8 } })).body);
  const refused = await post('optim_step', { model_id: m, adam_params: { learning_rate: 0, eps: 1e-8 } });
  assert.equal(refused.status, 429);
  assert.match(JSON.stringify(refused.body), /--tinker-max-futures/);
  for (const f of waiting) assert.equal((await result(f)).status, 200);
  for (const id of models) await unload(id);
});

test('sampler engines: at most max loaded; an idle one makes room, and when all are busy the request is refused', async () => {
  // The loader stands in for llama.cpp so the test decides when a sample ends (a real one ends when it ends).
  const disposed: string[] = [];
  const engine = (f: string) => ({ dispose: async () => void disposed.push(f) }) as unknown as LlamaEngine;
  const samplers = new Samplers(async (f) => engine(f), 2);
  let finish!: () => void;
  const busy = new Promise<void>((r) => (finish = r));
  const a = samplers.reserve('a').run(() => busy);
  await samplers.reserve('b').run(async () => undefined);
  const c = samplers.reserve('c'); // b is idle: it makes room
  assert.equal(samplers.loaded, 2);
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(disposed, ['b']);
  assert.throws(
    () => samplers.reserve('d'),
    (e: unknown) => e instanceof SamplersBusyError && /--tinker-max-samplers/.test(e.message),
  );
  finish();
  await a;
  c.release();
  samplers.reserve('d').release(); // now one is idle again
  assert.equal(samplers.loaded, 2);
});

test('the key is compared whatever its length; saved states outlive other models’ saves and a restart; a generated key has the SDK’s tml- form', async () => {
  assert.equal(
    (await fetch(`${root}/api/v1/create_session`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': 'x' }, body: '{}' })).status,
    401,
  );
  const configRes = await post('client/config', { sdk_version: '0.25.0' });
  assert.equal(configRes.status, 200);
  assert.equal(configRes.body.proto_compress_fwdbwd, true);

  const a = await newModel();
  await call('forward_backward', fbRequest(a, 2));
  await call('optim_step', { model_id: a, adam_params: { learning_rate: 0.05, eps: 1e-8 } });
  const state = (await call('save_weights', { model_id: a, path: 'a-1' })).path as string;
  const sampler = (await call('save_weights_for_sampler', { model_id: a, path: 'a-1' })).path as string;
  const b = await newModel();
  const bStates = [];
  for (let i = 0; i < 3; i++) bStates.push((await call('save_weights', { model_id: b, path: `b-${i}` })).path as string);
  // Model b keeps its last two (--tinker-keep-saves 2); a's state is untouched by b's saves.
  const gone = await post('load_weights', { model_id: b, path: bStates[0], optimizer: true });
  assert.equal(gone.status, 404);
  await call('load_weights', { model_id: b, path: bStates[2], optimizer: true });
  await call('load_weights', { model_id: b, path: state, optimizer: true });

  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  // Restarted on the same folder, without a key file: the new key is printed, in the SDK's form.
  const bin = fileURLToPath(new URL('../../bin/trace-rl.js', import.meta.url));
  child = spawn(process.execPath, [bin, 'serve', '--model', file, '--port', '0', '--tinker', '--tinker-state-dir', stateDir, ...LIMITS], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const err = await new Promise<string>((resolve, reject) => {
    let text = '';
    child.stderr!.on('data', (d: Buffer) => {
      text += d.toString();
      if (/X-API-Key[^\n]*: (\S+)\n/.test(text) && / at http:\/\//.test(text)) resolve(text);
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${text}`)));
  });
  key = /X-API-Key[^\n]*: (\S+)\n/.exec(err)![1]!;
  assert.match(key, /^tml-[0-9a-f]{48}$/);
  root = /at (http:\/\/\S+)\/v1/.exec(err)![1]!;
  const c = await newModel();
  const loaded = await call('load_weights', { model_id: c, path: state, optimizer: true });
  assert.equal(loaded.path, state);
  const session = await post('create_sampling_session', { session_id: 's', sampling_session_seq_id: 0, model_path: sampler });
  assert.equal(session.status, 200);
  const sample = await call('asample', {
    prompt: tokensInput([2, 7, 11]),
    num_samples: 1,
    sampling_params: { max_tokens: 4, seed: 1 },
    sampling_session_id: session.body.sampling_session_id,
  });
  assert.equal((sample.sequences as unknown[]).length, 1);
});
