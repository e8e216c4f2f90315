/**
 * The Tinker client against a hostile or broken engine: every answer is bounded by what its call asked
 * and checked against it, the key goes nowhere but the configured address and comes back out of no
 * message or stored path, and an engine that fails every poll fails the call in one line.
 *
 * Why a stand-in: the real engines (hosted Tinker, SkyRL, serve --tinker) do not answer these things on
 * purpose; the hostile engine here is a real HTTP server on a local port that answers them.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { PolicyCallError } from '../../../src/policy/errors.ts';
import { sampleAnswerBytes } from '../../../src/policy/tinker/answer-bounds.ts';
import { TinkerClient, TinkerPolicy, tinkerWire as wire, type TinkerClientOptions } from '../../../src/policy/tinker/index.ts';
import { PROTOBUF } from '../../../src/policy/tinker/proto-codec.ts';

const KEY = 'tml-hostile-key-0123456789';
type Handler = (path: string, body: Record<string, unknown>, res: ServerResponse, req: IncomingMessage) => unknown;

const json = (res: ServerResponse, status: number, value: unknown): void =>
  void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));

/** The engine's routes every test shares (a session, a model, futures answered at once); `answer` replaces any of them. */
let answer: Handler | undefined;
/** What the result of the last submitted future is: sent by `retrieve_future`. */
let pending: (res: ServerResponse) => void = (res) => json(res, 200, {});
const seen: Array<{ path: string; key?: string }> = [];

async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString();
  const body = text && req.headers['content-type'] === 'application/json' ? (JSON.parse(text) as Record<string, unknown>) : {};
  const path = req.url!;
  seen.push({ path, key: req.headers['x-api-key'] as string | undefined });
  if (answer) {
    await answer(path, body, res, req);
    if (res.headersSent) return;
  }
  if (path === '/api/v1/client/config') return json(res, 404, { detail: 'no such route' });
  if (path === '/api/v1/get_server_capabilities') return json(res, 200, { supported_models: [{ model_name: 'tiny', max_context_length: 64 }] });
  if (path === '/api/v1/create_session') return json(res, 200, { session_id: 'session-1' });
  if (path === '/api/v1/session_heartbeat') return json(res, 200, {});
  if (path === '/api/v1/create_model') return json(res, 200, { model_id: 'model-1' });
  if (path === '/api/v1/retrieve_future') return pending(res);
  return json(res, 200, { request_id: `req-${seen.length}` });
}

function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })));
}

let engine: { server: Server; url: string };
before(async () => {
  engine = await listen((req, res) => void route(req, res));
});
after(() => engine.server.close());

const client = (options: Partial<TinkerClientOptions> = {}) => new TinkerClient({ baseURL: engine.url, apiKey: KEY, pollBackoffMs: 5, ...options });
const sampleRequest = (numSamples = 1, maxTokens = 16): wire.SampleRequest => ({
  prompt: wire.tokensInput([1, 2, 3]),
  num_samples: numSamples,
  sampling_params: { max_tokens: maxTokens, temperature: 1 },
  base_model: 'tiny',
});
const datum = (n: number): wire.Datum => ({
  model_input: wire.tokensInput(Array.from({ length: n }, (_, i) => i + 1)),
  loss_fn_inputs: {
    target_tokens: wire.ints(Array.from({ length: n }, (_, i) => i + 2)),
    logprobs: wire.floats(Array(n).fill(-1)),
    advantages: wire.floats(Array(n).fill(1)),
  },
});
/** One line, no stack, no key: what a refusal must be. */
function oneLine(e: unknown, pattern: RegExp): boolean {
  assert.ok(e instanceof PolicyCallError, String(e));
  assert.equal(e.message.includes('\n'), false, e.message);
  assert.equal(e.message.includes(KEY), false, e.message);
  assert.match(e.message, pattern);
  return true;
}

/** Writes `head`, then `chunk` until the client hangs up; resolves the bytes written. */
function endless(res: ServerResponse, type: string, head: string, chunk: string | Uint8Array): Promise<number> {
  res.writeHead(200, { 'content-type': type });
  res.write(head);
  let written = 0;
  return new Promise((resolve) => {
    res.on('close', () => resolve(written));
    const pump = () => {
      while (!res.destroyed) {
        written += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
    };
    pump();
  });
}

test('a sample answered by an endless body (protobuf empty sequences or JSON empty arrays) is refused at the bound its request sets, eight at once each at its own', async () => {
  const written: Promise<number>[] = [];
  let protobuf = true;
  pending = (res) => {
    written.push(
      protobuf
        ? endless(
            res,
            PROTOBUF,
            '',
            new Uint8Array(64 * 1024).fill(0).map((_, i) => (i % 2 ? 0 : 0x0a)),
          )
        : endless(res, 'application/json', '{"junk":[', '[],'.repeat(20_000)),
    );
  };
  const c = client();
  const bound = sampleAnswerBytes(sampleRequest(1, 16));
  assert.ok(bound < 256 * 1024, `a 16-token sample's answer is a few kilobytes (${bound})`);
  for (const kind of [true, false]) {
    protobuf = kind;
    written.length = 0;
    const calls = await Promise.allSettled(Array.from({ length: 8 }, () => c.sample(sampleRequest(1, 16))));
    for (const call of calls) {
      assert.equal(call.status, 'rejected');
      oneLine(call.reason, new RegExp(`retrieve_future: the engine's answer is refused: \\d+ bytes sent so far, more than the ${bound} `));
    }
    const sent = await Promise.all(written);
    // What left the engine before the client hung up: the bound plus what the sockets buffered, not hundreds of megabytes.
    for (const n of sent) assert.ok(n < 16 * 1024 * 1024, `${n} bytes written`);
  }
  c.close();
});

test('a protobuf sample of more sequences than asked is refused before it is decoded; a declared length past the bound before it is read', async () => {
  const c = client();
  // 20 KB of empty SampledSequences (field 1, length 0): 10,240 of them for num_samples 1, within the byte bound.
  pending = (res) => res.writeHead(200, { 'content-type': PROTOBUF }).end(Buffer.alloc(20 * 1024).map((_, i) => (i % 2 ? 0 : 0x0a)));
  await assert.rejects(c.sample(sampleRequest()), (e) => oneLine(e, /a protobuf sample result past what was asked: sequences/));
  pending = (res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(300 * 1024 * 1024) });
    res.write('{');
  };
  await assert.rejects(c.sample(sampleRequest()), (e) => oneLine(e, /314572800 bytes declared, more than the \d+ this call's answer may take/));
  c.close();
});

test('impossible sample answers are refused as the engine’s error: 16 sequences for num_samples 1, a log-probability of +50, more tokens than max_tokens', async () => {
  const c = client();
  const seq = (tokens: number[], logprobs: number[]) => ({ tokens, logprobs, stop_reason: 'stop' });
  const cases: Array<[unknown, RegExp]> = [
    [{ sequences: Array.from({ length: 16 }, () => seq([5], [-1])) }, /16 sequences for num_samples 1/],
    [{ sequences: [seq([5, 6], [-0.5, 50])] }, /sequences\[0\]\.logprobs\[1\] is 50, not a log-probability/],
    [{ sequences: [seq(Array(17).fill(5), Array(17).fill(-1))] }, /sequences\[0\] has 17 tokens for max_tokens 16/],
  ];
  for (const [body, pattern] of cases) {
    pending = (res) => json(res, 200, body);
    await assert.rejects(c.sample(sampleRequest()), (e) => oneLine(e, pattern) && !(e as PolicyCallError).retryable);
  }
  // A float32 rounding of a certain token's 0 is a log-probability.
  pending = (res) => json(res, 200, { sequences: [seq([5], [1e-7])] });
  assert.deepEqual((await c.sample(sampleRequest())).sequences[0]!.tokens, [5]);
  c.close();
});

test('forward_backward log-probabilities shorter than the datum, or above 0, are refused; its answer is bounded by the datums sent', async () => {
  const c = client();
  const out = (values: number[]) => ({ loss_fn_outputs: [{ logprobs: wire.floats(values) }], metrics: {} });
  pending = (res) => json(res, 200, out([-1, -1]));
  await assert.rejects(c.forwardBackward('model-1', [datum(4)], 'ppo'), (e) =>
    oneLine(e, /loss_fn_outputs\[0\]\.logprobs has 2 values for a datum of 4 target tokens/),
  );
  pending = (res) => json(res, 200, out([-1, -1, 3, -1]));
  await assert.rejects(c.forwardBackward('model-1', [datum(4)], 'ppo'), (e) => oneLine(e, /logprobs\[2\] is 3, not a log-probability/));
  pending = (res) => void endless(res, 'application/json', '{"loss_fn_outputs":[', '[],'.repeat(20_000));
  await assert.rejects(c.forwardBackward('model-1', [datum(4)], 'ppo'), (e) =>
    oneLine(e, /retrieve_future: the engine's answer is refused: \d+ bytes sent so far, more than the \d+/),
  );
  pending = (res) => json(res, 200, out([-1, -2, -3, -4]));
  assert.deepEqual((await c.forwardBackward('model-1', [datum(4)], 'ppo')).loss_fn_outputs[0]!.logprobs!.data, [-1, -2, -3, -4]);
  c.close();
});

test('an engine answering 307 to another address is refused in one line, and the key never reaches that address', async () => {
  const elsewhere: Array<string | undefined> = [];
  const other = await listen((req, res) => {
    elsewhere.push(req.headers['x-api-key'] as string | undefined);
    json(res, 200, { session_id: 'stolen' });
  });
  try {
    answer = (path, _body, res) => {
      if (path === '/api/v1/create_session') res.writeHead(307, { location: `${other.url}/api/v1/create_session` }).end();
    };
    const c = client();
    await assert.rejects(c.createSession(), (e) =>
      oneLine(
        e,
        /create_session: HTTP 307, a redirect to http:\/\/127\.0\.0\.1:\d+\/api\/v1\/create_session: engine calls follow no redirect .*policy\.baseUrl/,
      ),
    );
    assert.deepEqual(elsewhere, [], 'nothing reached the other address');
    c.close();
  } finally {
    answer = undefined;
    other.server.close();
  }
});

test('the key is cut out of an engine’s error in every encoding, and its control characters are escaped onto one line', async () => {
  const c = client();
  const forms = [KEY, Buffer.from(`user:${KEY}`).toString('base64'), Buffer.from(KEY).toString('hex'), encodeURIComponent(`${KEY}/`)];
  for (const form of forms) {
    pending = (res) => json(res, 200, { error: `denied (${form})\n\u001b[31mFAKE: all good\u001b[0m`, category: 'user' });
    await assert.rejects(c.optimStep('model-1', wire.adamSchema.parse({})), (e) => {
      oneLine(e, /\[API key\]/);
      const message = (e as Error).message;
      assert.equal(message.includes(form.slice(8, 24)), false, `${form} is cut: ${message}`);
      assert.equal(message.includes('\u001b'), false, 'no escape sequence reaches the terminal');
      assert.match(message, /\\n\\x1b\[31mFAKE/);
      return true;
    });
  }
  c.close();
});

test('a checkpoint path the engine chose carrying the key is stored without it, in any encoding', async () => {
  const b64 = Buffer.from(`x${KEY}`).toString('base64');
  answer = (path, _body, res) => {
    if (path === '/api/v1/save_weights')
      return json(res, 200, { path: `tinker://model-1/weights/state-1?k=${KEY}&b=${Buffer.from(`x${KEY}`).toString('base64')}` });
    if (path === '/api/v1/save_weights_for_sampler') return json(res, 200, { path: 'tinker://model-1/sampler/step-1' });
  };
  pending = (res) => json(res, 200, {});
  try {
    const policy = new TinkerPolicy({
      baseURL: engine.url,
      baseModel: 'tiny',
      loraRank: 1,
      apiKey: KEY,
      transcript: undefined as never, // not reached: the engine reports the context length, and no sample is built
      prompt: 'question',
      temperature: 1,
      maxTokensPerTurn: 8,
      stop: [],
      adam: { beta1: 0.9, beta2: 0.999, eps: 1e-8, gradClipNorm: 1 },
    });
    await policy.update([], { learningRate: 0.01, clip: 0.2, epochs: 1 });
    const stored = new TextDecoder().decode(policy.save());
    policy.close();
    assert.match(stored, /"state":"tinker:\/\/model-1\/weights\/state-1\?k=\[API key\]&b=/);
    assert.equal(stored.includes(KEY), false, stored);
    assert.equal(stored.includes(b64.slice(4, 20)), false, `no base64 form: ${stored}`);
  } finally {
    answer = undefined;
  }
});

test('a future whose polls answer 500 is retried like a call and then fails in one line, not after 30 minutes', async () => {
  let polls = 0;
  pending = (res) => {
    polls++;
    json(res, 500, { detail: 'internal error' });
  };
  const c = client({ pollAttempts: 4 });
  await assert.rejects(c.saveState('model-1', 'state-1'), (e) =>
    oneLine(e, /retrieve_future: HTTP 500: .*internal error.* \(future req-\d+: 4 polls failed in a row, the last one here\)/),
  );
  assert.equal(polls, 4);
  // One 503 among good answers is ridden out.
  let n = 0;
  pending = (res) => (n++ === 0 ? json(res, 503, { detail: 'busy' }) : json(res, 200, { path: 'tinker://ok' }));
  assert.equal(await c.saveState('model-1', 'state-1'), 'tinker://ok');
  c.close();
});

test('retrieve_futures: a sample waits on its session’s long-poll; an answer of too many completions, or polls failing 5xx, fail the sample in one line', async () => {
  const polls: Array<Record<string, unknown>> = [];
  let sampleId = '';
  let poll: (res: ServerResponse) => void = () => undefined;
  answer = (path, body, res) => {
    if (path === '/api/v1/client/config') return json(res, 200, { sample_use_retrieve_futures: true });
    if (path === '/api/v1/create_sampling_session') return json(res, 200, { sampling_session_id: 'sampling-1' });
    if (path === '/api/v1/asample') {
      sampleId = `sample-${polls.length}-${String(body.seq_id)}`;
      return json(res, 200, { request_id: sampleId });
    }
    if (path === '/api/v1/retrieve_futures') {
      polls.push(body);
      return poll(res);
    }
  };
  pending = (res) => json(res, 200, { sequences: [{ tokens: [5], logprobs: [-1], stop_reason: 'stop' }] });
  try {
    const c = client({ pollAttempts: 3 });
    // The engine reports the sample complete on the second poll, with the cursor to send next.
    let n = 0;
    poll = (res) =>
      n++ === 0 ? json(res, 200, { completions: [], cursor: 0 }) : json(res, 200, { completions: [{ state: 'finished', request_id: sampleId }], cursor: 7 });
    assert.deepEqual((await c.sample(sampleRequest())).sequences[0]!.tokens, [5]);
    assert.deepEqual(polls.at(-1), {
      target: { type: 'sampling_session', sampling_session_id: 'sampling-1', cloned_sampler_id: 0 },
      prev_cursor: 0,
      timeout: 30,
    });
    n = 1;
    await c.sample(sampleRequest());
    assert.equal(polls.at(-1)!.prev_cursor, 7, 'the cursor goes back as prev_cursor');

    poll = (res) => json(res, 200, { completions: Array.from({ length: 5000 }, (_, i) => ({ state: 'finished', request_id: `x-${i}` })), cursor: 1 });
    await assert.rejects(c.sample(sampleRequest()), (e) => oneLine(e, /retrieve_futures: the engine's answer is refused: not a retrieve_futures answer/));
    poll = (res) => json(res, 503, { detail: 'down' });
    const before = polls.length;
    await assert.rejects(c.sample(sampleRequest()), (e) => oneLine(e, /retrieve_futures: HTTP 503: .*down.* \(3 polls failed in a row\)/));
    assert.equal(polls.length - before, 3);
    c.close();
  } finally {
    answer = undefined;
  }
});

test('the session’s finish is best effort: an engine that hangs on it, or has no such route, never fails or holds the end of a run', async () => {
  const finishes: Array<Record<string, unknown>> = [];
  let hang = true;
  answer = (path, body, res) => {
    if (!path.endsWith('/finish')) return;
    finishes.push(body);
    if (!hang) return json(res, 404, { detail: 'Not Found' });
    // Never answered: the client's own 5 s limit ends the wait.
    return new Promise(() => undefined);
  };
  try {
    for (const reason of ['interrupted', 'errored'] as const) {
      const c = client();
      await c.createSession();
      const t0 = Date.now();
      await c.finish(reason);
      // 5 s for the one that hangs (its limit), at once for the 404; generous margins for a shared machine.
      assert.ok(Date.now() - t0 < (hang ? 30_000 : 10_000), `the wait is bounded: ${Date.now() - t0} ms`);
      hang = false;
    }
    assert.deepEqual(finishes, [{ reason: { type: 'interrupted' } }, { reason: { type: 'errored' } }]);
    // A client that never opened a session tells nothing.
    await client().finish('success');
    assert.equal(finishes.length, 2);
  } finally {
    answer = undefined;
  }
});
