/**
 * The tinker policy and client against a real `serve --tinker` (the tiny LM: llama.cpp samples with a
 * small context, jax-js trains), in process, behind a recording proxy (recording-proxy.ts says
 * why): what the engine serves is checked before any rollout, no trajectory or datum outgrows the
 * context, a resumed policy samples its loaded weights, a run makes one session and one model, seq_ids
 * count from 1 per model, the session is kept alive, forward_backward is chunked, and a future's 408 or
 * long hold is polled again.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { PolicyCallError } from '../../../src/policy/errors.ts';
import { buildPolicy, PolicyConfigError } from '../../../src/policy/registry.ts';
import { defaultEndOfTurn, TinkerPolicy, tinkerSettings, type TinkerPolicyOptions } from '../../../src/policy/tinker/index.ts';
import { provenanceProblem } from '../../../src/policy/tinker/provenance.ts';
import type { Datum } from '../../../src/policy/tinker/wire.ts';
import type { PolicySample } from '../../../src/policy/types.ts';
import { diagnose, diagnosisJson, formatDiagnosis } from '../../../src/diagnose/index.ts';
import { writeReport } from '../../../src/report/index.ts';
import { RunStore } from '../../../src/store/index.ts';
import { LlamaEngine, serveOpenAI } from '../../../src/tinylm/index.ts';
import { loadTranscript } from '../../../src/tokens/index.ts';
import { train } from '../../../src/train/index.ts';
import { leaves, turnsTo, type RolloutTree } from '../../../src/tree/index.ts';
import { initJax } from '../../../src/util/jax.ts';
import { createRng } from '../../../src/util/rng.ts';
import { runCli } from '../../helpers/run-cli.ts';
import { fixture, writeTemp } from '../../tinylm/fixtures.ts';
import { startRecordingProxy, type RecordingProxy } from './recording-proxy.ts';

const { model, env } = fixture({}, 4);
/** The engine's context (llama.cpp may round the 128 asked for up); the tests read it from the engine. */
let CONTEXT = 128;
const KEY = 'tml-policy-test-key';
const dir = mkdtempSync(join(tmpdir(), 'tinker-policy-'));
const keyFile = join(dir, 'key');
writeFileSync(keyFile, `${KEY}\n`);
let server: { url: string; close(): Promise<void> };
const engines: LlamaEngine[] = [];
let proxy: RecordingProxy;
/** Step 0's trees of a run whose trajectories outgrow the context (test 3), reused by the update tests. */
let trees: RolloutTree[] = [];
const policies: TinkerPolicy[] = [];

before(async () => {
  await initJax();
  const file = writeTemp(model, 'tiny.gguf');
  const load = async (f: string) => {
    const e = await LlamaEngine.load(f, { sequences: 4, contextSize: CONTEXT });
    engines.push(e);
    return e;
  };
  const served = await load(file);
  CONTEXT = served.contextSize;
  server = await serveOpenAI(served, {
    modelName: 'tiny',
    port: 0,
    tinker: { model, workDir: join(dir, 'engine'), apiKey: KEY, baseFile: file, load },
  });
  proxy = await startRecordingProxy(server.url);
});
after(async () => {
  for (const p of policies) p.close();
  await proxy.close();
  await server.close();
  for (const e of engines) await e.dispose();
});

async function makePolicy(overrides: Partial<TinkerPolicyOptions> = {}): Promise<TinkerPolicy> {
  const policy = new TinkerPolicy({
    baseURL: proxy.url,
    baseModel: 'tiny',
    loraRank: 1,
    apiKey: KEY,
    transcript: await loadTranscript('server', { serverURL: server.url }),
    prompt: 'question',
    temperature: 1,
    maxTokensPerTurn: 32,
    stop: ['</search>', '</answer>'],
    adam: { beta1: 0.9, beta2: 0.999, eps: 1e-8, gradClipNorm: 1 },
    ...overrides,
  });
  policies.push(policy);
  return policy;
}

const ctx = (seed: number, maxTokens = 16) => ({ prompt: env.train[0]!, rendered: '', turns: [], rng: createRng(seed), maxTokens });
const since = (mark: number) => proxy.calls.slice(mark);
/** Every leaf path of step 0's trees, with advantages of alternating sign per path: updates with a gradient. */
const samples = (): PolicySample[] => {
  const prompts = new Map(env.train.map((p) => [p.id, p]));
  return trees.flatMap((t) =>
    leaves(t).map((leaf, i) => {
      const turns = turnsTo(t, leaf.id);
      return { prompt: prompts.get(t.promptId)!, turns, advantages: turns.map(() => (i % 2 ? -1 : 1)) };
    }),
  );
};
const UPDATE = { learningRate: 0.05, clip: 0.2, epochs: 1, normalise: 'turns' as const };

test('a model the engine does not serve is refused when the policy is built, before any other call, naming what it serves', async () => {
  const mark = proxy.calls.length;
  const settings = tinkerSettings.parse({ kind: 'tinker', baseUrl: proxy.url, model: 'nope', apiKeyFile: keyFile });
  await assert.rejects(
    buildPolicy(settings, { envKind: 'world', concurrency: 4 }),
    (e: Error) =>
      e instanceof PolicyConfigError &&
      e.message.includes(`${proxy.url}/api/v1/get_server_capabilities`) &&
      /it serves tiny\. Set policy\.model/.test(e.message),
  );
  assert.deepEqual(
    since(mark).map((c) => c.path),
    ['/tokenize', '/api/v1/get_server_capabilities'],
    'only the tokenizer and the capabilities were asked: no session, no model',
  );
  // `default` (the setting's default) is the engine's only model.
  assert.equal((await (await makePolicy({ baseModel: 'default' })).start()).model, 'tiny');
});

test('the context length is the engine’s: its capabilities, else its /tokenize; a setting may lower it, never raise it; none at all is refused', async () => {
  assert.equal((await (await makePolicy()).start()).contextLength, CONTEXT, 'serve --tinker reports max_context_length');
  assert.equal((await (await makePolicy({ contextLength: 64 })).start()).contextLength, 64);
  await assert.rejects(
    (await makePolicy({ contextLength: CONTEXT + 1 })).start(),
    new RegExp(`policy\\.contextLength ${CONTEXT + 1} is more than the ${CONTEXT} tokens the engine`),
  );
  try {
    // An engine that reports its models' context lengths (hosted Tinker's SupportedModel.max_context_length).
    proxy.fault = (path) =>
      path === '/api/v1/get_server_capabilities' ? { status: 200, body: { supported_models: [{ model_name: 'tiny', max_context_length: 100 }] } } : undefined;
    assert.equal((await (await makePolicy()).start()).contextLength, 100);
    // One that reports no length in its capabilities: its /tokenize's max_model_len (a server tokenizer).
    proxy.fault = (path) => (path === '/api/v1/get_server_capabilities' ? { status: 200, body: { supported_models: [{ model_name: 'tiny' }] } } : undefined);
    assert.equal((await (await makePolicy()).start()).contextLength, CONTEXT, 'from /tokenize');
    // Nothing at all, with a local tokenizer (no /tokenize to ask): the setting is needed.
    const bytes = await loadTranscript('bytes');
    await assert.rejects((await makePolicy({ transcript: bytes })).start(), /does not report tiny's context length .* set policy\.contextLength/);
    assert.equal((await (await makePolicy({ transcript: bytes, contextLength: 90 })).start()).contextLength, 90);
  } finally {
    proxy.fault = () => undefined;
  }
});

test('trajectories that outgrow the context end there (end context, reward 0): no sample and no datum passes the engine’s limit', async () => {
  const out = join(dir, 'context-run');
  const mark = proxy.calls.length;
  await train({
    out,
    config: {
      seed: 3,
      steps: 1,
      pool: 2,
      env: { questions: 300, seed: 7 },
      strategy: { name: 'grpo', budget: 4 },
      engine: { maxTurns: 12, concurrency: 4 },
      eval: { every: 10, questions: 2 },
      policy: { kind: 'tinker', baseUrl: proxy.url, model: 'tiny', prompt: 'question', maxTokensPerTurn: 32, apiKeyFile: keyFile, learningRate: 0.003 },
    },
    clock: () => 0,
  });
  const store = RunStore.open(out, { readonly: true });
  try {
    trees = store.trees(0);
  } finally {
    store.close();
  }
  const ends = trees.flatMap((t) => leaves(t).map((l) => ({ end: l.end, reward: l.reward })));
  assert.ok(
    ends.some((e) => e.end === 'context'),
    `some trajectory filled the context: ${JSON.stringify(ends)}`,
  );
  assert.ok(ends.filter((e) => e.end === 'context').every((e) => e.reward === 0));
  for (const c of since(mark).filter((x) => x.path === '/api/v1/asample')) {
    const prompt = (c.body.prompt as { chunks: Array<{ tokens: number[] }> }).chunks.flatMap((x) => x.tokens);
    const max = (c.body.sampling_params as { max_tokens: number }).max_tokens;
    assert.ok(prompt.length + max <= CONTEXT, `a sample of ${prompt.length} + ${max} tokens`);
  }

  // The update: every leaf path with an advantage, the context-ended ones among them.
  const policy = await makePolicy();
  const all = samples();
  const full = await Promise.all(all.map((s) => policy.sequence(s.prompt, '', s.turns)));
  assert.ok(
    full.some((s) => s.ids.length > CONTEXT),
    'with the observation after its last turn, some path is longer than the context (what the engine refused with 413)',
  );
  const before = proxy.calls.length;
  const metrics = await policy.update(all, UPDATE);
  assert.ok(metrics.turns > 0);
  const data = since(before)
    .filter((c) => c.path === '/api/v1/forward_backward')
    .flatMap(
      (c) =>
        (
          c.body.forward_backward_input as {
            data: Array<{ model_input: { chunks: Array<{ tokens: number[] }> }; loss_fn_inputs: Record<string, { data: number[] }> }>;
          }
        ).data,
    );
  assert.equal(data.length, all.length);
  for (const d of data) {
    const input = d.model_input.chunks.flatMap((x) => x.tokens);
    assert.ok(input.length + 1 <= CONTEXT, `a datum of ${input.length + 1} tokens`);
    // It ends at its last trained token: the last target carries an advantage (no observation after it).
    assert.notEqual(d.loss_fn_inputs.advantages!.data.at(-1), 0);
  }
});

test('a resumed policy samples the weights it loaded, even when its first call comes while the load is under way', async () => {
  const trained = await makePolicy();
  await trained.update(samples(), UPDATE);
  const snapshot = trained.save();
  const resumed = await makePolicy();
  resumed.load(snapshot);
  // The loop reads the checkpoint, then starts the step a moment later.
  await new Promise((r) => setImmediate(r));
  const b = await resumed.act(ctx(1));
  const a = await trained.act(ctx(1));
  assert.deepEqual(b.tokens!.ids, a.tokens!.ids);
  b.tokens!.logprobs.forEach((l, i) => assert.ok(Math.abs(l - a.tokens!.logprobs[i]!) < 1e-6, `token ${i}: ${l} vs ${a.tokens!.logprobs[i]}`));
  const base = await (await makePolicy()).act(ctx(1));
  assert.ok(
    base.tokens!.ids.join() !== a.tokens!.ids.join() || base.tokens!.logprobs.some((l, i) => Math.abs(l - a.tokens!.logprobs[i]!) > 1e-3),
    'the update moved the policy (so sampling the base model would have been seen)',
  );
});

test('a fresh policy makes one session and one model however many calls start at once; seq_ids count from 1 per model', async () => {
  const mark = proxy.calls.length;
  const policy = await makePolicy();
  await Promise.all([1, 2, 3, 4].map((s) => policy.act(ctx(s))));
  assert.equal(since(mark).filter((c) => c.path === '/api/v1/create_session').length, 1);
  const created = since(mark).filter((c) => c.path === '/api/v1/create_model');
  assert.equal(created.length, 1);
  assert.equal(created[0]!.body.model_seq_id, 0, 'the session’s first model');
  const before = proxy.calls.length;
  await policy.update(samples(), UPDATE);
  const seq = since(before)
    .filter((c) => c.path !== '/api/v1/retrieve_future' && c.path !== '/api/v1/session_heartbeat' && c.path !== '/api/v1/client/config')
    .map((c) => [c.path.replace('/api/v1/', ''), c.body.seq_id]);
  assert.deepEqual(seq, [
    ['forward_backward', 1],
    ['optim_step', 2],
    ['save_weights_for_sampler', 3],
    ['save_weights', 4],
  ]);
});

test('the session is kept alive with heartbeats until the policy is closed', async () => {
  const policy = await makePolicy({ client: { heartbeatMs: 20 } });
  await policy.act(ctx(1));
  const beats = () => proxy.to('/api/v1/session_heartbeat').length;
  const first = beats();
  await new Promise((r) => setTimeout(r, 150));
  assert.ok(beats() >= first + 2, `heartbeats: ${beats() - first}`);
  const last = proxy.to('/api/v1/session_heartbeat').at(-1)!.body;
  assert.equal(last.type, 'session_heartbeat');
  assert.match(String(last.session_id), /^session-[0-9a-f]+$/);
  policy.close();
  // A beat sent just before close may still be on its way through the proxy (a loaded machine once
  // recorded one such late arrival): it lands first; after that, none comes (at 20 ms, 6 would).
  await new Promise((r) => setTimeout(r, 200));
  const stopped = beats();
  await new Promise((r) => setTimeout(r, 120));
  assert.equal(beats(), stopped);
});

test('forward_backward goes in chunks (datums and bytes), one seq_id each, and the joined result is the unchunked one; each datum carries its provenance', async () => {
  const all = samples();
  const run = async (client: TinkerPolicyOptions['client']) => {
    const policy = await makePolicy({ client });
    const mark = proxy.calls.length;
    const m = await policy.update(all, UPDATE);
    return { m, calls: since(mark).filter((c) => c.path === '/api/v1/forward_backward') };
  };
  const whole = await run({});
  const byCount = await run({ maxChunkDatums: 2 });
  const byBytes = await run({ maxChunkBytes: 1 });
  assert.equal(whole.calls.length, 1);
  assert.equal(byCount.calls.length, Math.ceil(all.length / 2));
  assert.equal(byBytes.calls.length, all.length, 'a datum over the byte limit goes alone');
  assert.deepEqual(
    byCount.calls.map((c) => c.body.seq_id),
    byCount.calls.map((_, i) => i + 1),
  );
  for (const r of [byCount, byBytes]) assert.ok(Math.abs(r.m.loss - whole.m.loss) < 1e-6, `loss ${r.m.loss} vs ${whole.m.loss}`);
  // SDK 0.32's provenance: every datum says which of its tokens the engine sampled, by the ids its
  // asample futures gave (serve --tinker: the request id and the sample's index), and which it was given.
  const datums = whole.calls.flatMap((c) => (c.body.forward_backward_input as { data: Datum[] }).data);
  assert.ok(datums.length > 0);
  for (const d of datums) {
    const inputs = d.model_input.chunks.flatMap((c) => c.tokens).length;
    assert.equal(provenanceProblem(d, inputs, d.loss_fn_inputs.target_tokens!.data.length), undefined);
    assert.deepEqual(d.model_input_spans![0], { ...d.model_input_spans![0]!, type: 'prompt_tokens', offset: 0 });
    const sampled = d.model_input_spans!.filter((s) => s.type === 'sampled_tokens');
    assert.ok(sampled.length > 0 && sampled.every((s) => /^req-[0-9a-f]{32}:0$/.test(s.sequence_id) && s.offset === 0), JSON.stringify(d.model_input_spans));
  }
});

test('a future answered 408, held past the poll’s limit or failing with 503 is polled again; a 404 ends the call', async () => {
  const policy = await makePolicy({ client: { retrieveTimeoutMs: 100 } });
  await policy.act(ctx(1));
  let n = 0;
  const faults = [{ status: 408, body: { type: 'try_again', queue_state: 'active' } }, { holdMs: 60_000 }, { status: 503, body: { error: 'busy' } }];
  proxy.fault = (path) => (path === '/api/v1/retrieve_future' ? faults[n++] : undefined);
  try {
    const out = await policy.act(ctx(2));
    assert.ok(out.tokens!.ids.length > 0);
    assert.equal(n, 4, 'three faults, then the result');
    n = 0;
    faults.splice(0, 3, { status: 404, body: { error: 'gone' } });
    await assert.rejects(policy.act(ctx(3)), (e: Error) => e instanceof PolicyCallError && !e.retryable && /HTTP 404/.test(e.message));
  } finally {
    proxy.fault = () => undefined;
  }
});

test('the model’s end-of-turn token is sent as a stop, and a sample an engine ran on past it is cut after it', async () => {
  // The tiny LM's vocabulary has no chat end-of-turn token: one of its single-token texts stands in for it.
  const plain = await makePolicy({ maxTokensPerTurn: 24 });
  const ran = await plain.act(ctx(5, 24));
  const tokenizer = (await loadTranscript('server', { serverURL: server.url })).tokenizer;
  let k = -1;
  let text = '';
  for (let i = 1; i < ran.tokens!.ids.length - 1 && k < 0; i++) {
    const id = ran.tokens!.ids[i]!;
    await tokenizer.prepare!([], [[id]]);
    text = tokenizer.decode([id]);
    await tokenizer.prepare!([text]);
    if (text.trim() !== '' && tokenizer.encode(text).join() === String(id) && ran.tokens!.ids.indexOf(id) === i) k = i;
  }
  assert.ok(k > 0, 'a token of the sample that is its own text');
  const policy = await makePolicy({ maxTokensPerTurn: 24, endOfTurn: text });
  const mark = proxy.calls.length;
  // An engine that ignores stop strings: the proxy takes them out.
  proxy.rewrite = (path, body) => (path === '/api/v1/asample' ? { ...body, sampling_params: { ...(body.sampling_params as object), stop: [] } } : undefined);
  try {
    const out = await policy.act(ctx(5, 24));
    const sent = since(mark).find((c) => c.path === '/api/v1/asample')!.body.sampling_params as { stop: string[] };
    assert.deepEqual(sent.stop, ['</search>', '</answer>', text]);
    assert.deepEqual(out.tokens!.ids, ran.tokens!.ids.slice(0, k + 1), 'cut after the end-of-turn token');
    assert.equal(out.generatedTokens, ran.tokens!.ids.length, 'what the engine generated is still counted');
  } finally {
    proxy.rewrite = () => undefined;
  }
  await assert.rejects((await makePolicy({ endOfTurn: `${text}${text}${text}` })).start(), /policy\.endOfTurn .* tokens of server:.*, not one/);
});

test('the end-of-turn text comes from the tokenizer: Qwen3’s <|im_end|>, a folder’s eos_token, none for a server', () => {
  assert.equal(defaultEndOfTurn('qwen3'), '<|im_end|>');
  const folder = mkdtempSync(join(tmpdir(), 'hf-'));
  writeFileSync(join(folder, 'tokenizer_config.json'), JSON.stringify({ eos_token: { content: '<|eot_id|>' } }));
  assert.equal(defaultEndOfTurn(`hf:${folder}`), '<|eot_id|>');
  assert.equal(defaultEndOfTurn('server'), undefined);
});

test('an engine that trains full weights is refused the LoRA default rate before any rollout; a rate chosen for it is taken', async () => {
  // serve --tinker trains the tiny LM's full weights and says so (get_info: is_lora false), as verl_tinker trains full weights.
  const build = (extra: Record<string, unknown>) =>
    buildPolicy(tinkerSettings.parse({ kind: 'tinker', baseUrl: proxy.url, model: 'tiny', apiKeyFile: keyFile, ...extra }), {
      envKind: 'world',
      concurrency: 4,
    });
  const mark = proxy.calls.length;
  await assert.rejects(build({}), (e: Error) => e instanceof PolicyConfigError && /trains tiny's full weights .* LoRA default 0\.0003/.test(e.message));
  assert.ok(!since(mark).some((c) => c.path === '/api/v1/asample'), 'nothing was sampled');
  const built = await build({ learningRate: 0.003 });
  (built.policy as TinkerPolicy).close();
});

test('for an engine that averages per sequence (SkyRL’s JAX backend) each datum’s advantages are scaled so its gradient is the sum’s', async () => {
  const all = samples();
  const sent = async (lossReduction: 'sum' | 'sequence-mean') => {
    const policy = await makePolicy({ lossReduction });
    const mark = proxy.calls.length;
    await policy.update(all, UPDATE);
    return since(mark)
      .filter((c) => c.path === '/api/v1/forward_backward')
      .flatMap((c) => (c.body.forward_backward_input as { data: Array<{ loss_fn_inputs: Record<string, { data: number[] }> }> }).data);
  };
  const sum = await sent('sum');
  const mean = await sent('sequence-mean');
  assert.equal(mean.length, sum.length);
  // SkyRL's reduction: (1/N) Σ_i (1/n_i) Σ_t loss_it, n_i = the datum's target tokens (its default weights are all 1).
  const n = mean.length;
  mean.forEach((d, i) => {
    const ni = d.loss_fn_inputs.target_tokens!.data.length;
    d.loss_fn_inputs.advantages!.data.forEach((a, t) => {
      const want = sum[i]!.loss_fn_inputs.advantages!.data[t]!;
      assert.ok(Math.abs(a / n / ni - want) < 1e-9 * Math.max(1, Math.abs(want)), `datum ${i} token ${t}: ${a / n / ni} vs ${want}`);
    });
  });
  assert.ok(mean.some((d) => d.loss_fn_inputs.advantages!.data.some((a) => a !== 0)));
});

test('--resume follows the engine to a new --base-url: its saved state is loaded there, and the run stores the new address', async () => {
  const out = join(dir, 'moved-run');
  const policy = { kind: 'tinker', model: 'tiny', prompt: 'question', maxTokensPerTurn: 16, apiKeyFile: keyFile, learningRate: 0.003 };
  const run = { seed: 4, pool: 2, env: { questions: 300, seed: 7 }, strategy: { name: 'grpo', budget: 4 }, engine: { maxTurns: 2, concurrency: 2 } };
  await train({ out, config: { ...run, steps: 1, eval: { every: 10, questions: 2 }, policy: { ...policy, baseUrl: server.url } }, clock: () => 0 });
  const mark = proxy.calls.length;
  // The engine moved (here: the same server, now reached through the proxy's address).
  const r = await runCli(['train', '--resume', out, '--base-url', proxy.url, '--steps', '2', '--quiet']);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(r.stderr.includes(`policy.baseUrl ${server.url} → ${proxy.url}`), r.stderr);
  const loads = since(mark).filter((c) => c.path === '/api/v1/load_weights');
  assert.equal(loads.length, 1);
  assert.match(String(loads[0]!.body.path), /^tinker:\/\/model-[0-9a-f]+\/weights\/state-1$/);
  const store = RunStore.open(out, { readonly: true });
  try {
    assert.equal((store.config() as { policy: { baseUrl: string } }).policy.baseUrl, proxy.url);
    assert.equal(store.steps().length, 2);
  } finally {
    store.close();
  }
  // An engine that does not hold the saved state: the error names the state and the engine that saved it.
  const lost = await makePolicy();
  lost.load(
    new TextEncoder().encode(
      JSON.stringify({ format: 'trace-rl/tinker@1', baseURL: 'http://old-engine:8080', state: 'tinker://model-99/weights/state-1', updates: 1 }),
    ),
  );
  await assert.rejects(
    lost.act(ctx(1)),
    /HTTP 404.*tinker:\/\/model-99\/weights\/state-1, saved by the engine at http:\/\/old-engine:8080: resume against an engine that holds it/s,
  );
});

test('a run speaks the SDK wire it names: sdk_version, the engine’s prefix-cache hits beside the prompt tokens sent, and sessions/{id}/finish with how it ended', async () => {
  const policy = { kind: 'tinker', model: 'tiny', prompt: 'question', maxTokensPerTurn: 8, apiKeyFile: keyFile, learningRate: 0.003, baseUrl: proxy.url };
  const run = { seed: 4, pool: 2, env: { questions: 300, seed: 7 }, strategy: { name: 'grpo', budget: 4 }, engine: { maxTurns: 2, concurrency: 2 } };
  const config = { ...run, steps: 1, eval: { every: 10, questions: 2 }, policy };
  const finishes = (mark: number) => since(mark).filter((c) => /^\/api\/v1\/sessions\/[^/]+\/finish$/.test(c.path));

  let mark = proxy.calls.length;
  const out = join(dir, 'wire-run');
  assert.equal((await train({ out, config, clock: () => 0 })).status, 'finished');
  const versioned = since(mark).filter((c) => c.path === '/api/v1/create_session' || c.path === '/api/v1/client/config');
  assert.ok(versioned.some((c) => c.path === '/api/v1/create_session'));
  for (const c of versioned) assert.equal(c.body.sdk_version, '0.32.0', c.path);
  // serve --tinker's client config asks for retrieve_futures: samples go through sampling sessions, as the SDK sends them.
  const sampled = since(mark).filter((c) => c.path === '/api/v1/asample');
  assert.ok(sampled.length > 0);
  const seqs = new Map<string, number[]>();
  for (const c of sampled) {
    assert.match(String(c.body.sampling_session_id), /^sampling-[0-9a-f]+$/);
    assert.equal(c.body.model_path, undefined);
    seqs.set(String(c.body.sampling_session_id), [...(seqs.get(String(c.body.sampling_session_id)) ?? []), c.body.seq_id as number]);
  }
  for (const ids of seqs.values())
    assert.deepEqual(
      [...ids].sort((a, b) => a - b),
      ids.map((_, i) => i),
      'seq_ids count from 0 per sampling session',
    );
  assert.equal(since(mark).filter((c) => c.path === '/api/v1/create_sampling_session').length, seqs.size);
  const longPolls = since(mark).filter((c) => c.path === '/api/v1/retrieve_futures');
  assert.ok(longPolls.length > 0 && longPolls.every((c) => seqs.has(String((c.body.target as { sampling_session_id: string }).sampling_session_id))));
  const finished = finishes(mark);
  assert.equal(finished.length, 1, 'one finish, at the end');
  assert.match(finished[0]!.path, /^\/api\/v1\/sessions\/session-[0-9a-f]+\/finish$/);
  assert.deepEqual(finished[0]!.body.reason, { type: 'success' });
  const store = RunStore.open(out, { readonly: true });
  try {
    const m = store.steps()[0]!.metrics;
    // Every sample of a prompt shares its prompt with the others (four rollouts of each): llama.cpp re-uses those tokens.
    assert.ok(m.tinker_prompt_tokens! > 0, JSON.stringify(m));
    assert.ok(m.tinker_prompt_cache_hit_tokens! > 0 && m.tinker_prompt_cache_hit_tokens! < m.tinker_prompt_tokens!, JSON.stringify(m));
    // Four rollouts of each question: three of the four first-turn prompts repeat one already sent.
    assert.ok(m.tinker_prompt_shared_tokens! > 0 && m.tinker_prompt_shared_tokens! < m.tinker_prompt_tokens!, JSON.stringify(m));
  } finally {
    store.close();
  }
  // The report says it beside the run; diagnose says it of its own samples.
  const report = await writeReport({ runs: [out], out: join(dir, 'wire-report.html') });
  assert.ok(
    report.notes.some((n) =>
      /prompt tokens sent to the engine: \d+; in the trees' shared prefixes: \d+ \([\d.]+%\); taken from the engine's prefix cache, as it reports: \d+/.test(n),
    ),
    report.notes.join('\n'),
  );
  // The library call `trace-rl diagnose --policy tinker` makes (test/cli/tinker-commands.test.ts runs the command), as it prints it.
  const sampler = await makePolicy();
  const d = await diagnose({
    prompts: env.train.slice(0, 2),
    env,
    policy: sampler,
    k: 2,
    rollouts: 1,
    rng: createRng(5),
    settings: { maxTurns: 2, maxTokensPerTurn: 8 },
  });
  const about = { env: 'world', policy: sampler.name, prompts: 2, k: 2, rollouts: 1, maxTurns: 2, seed: 5 };
  assert.match(
    formatDiagnosis(d, about),
    /prompt tokens sent to the engine: [1-9]\d*; in the trees' shared prefixes: [1-9]\d* .*taken from the engine's prefix cache, as it reports: [1-9]\d*/,
  );
  assert.ok(diagnosisJson(d, about).engine!.tinker_prompt_tokens! > 0);

  // Stopped (Ctrl-C aborts the run's signal): interrupted.
  mark = proxy.calls.length;
  const stop = new AbortController();
  stop.abort();
  assert.equal((await train({ out: join(dir, 'wire-stopped'), config, clock: () => 0, signal: stop.signal })).status, 'stopped');
  assert.deepEqual(
    finishes(mark).map((c) => c.body.reason),
    [{ type: 'interrupted' }],
  );

  // Failed (the engine refuses the update's sampler weights): errored.
  mark = proxy.calls.length;
  proxy.fault = (path) => (path === '/api/v1/save_weights_for_sampler' ? { status: 400, body: { detail: 'refused for the test' } } : undefined);
  try {
    await assert.rejects(train({ out: join(dir, 'wire-failed'), config, clock: () => 0 }), /refused for the test/);
  } finally {
    proxy.fault = () => undefined;
  }
  assert.deepEqual(
    finishes(mark).map((c) => c.body.reason),
    [{ type: 'errored' }],
  );

  // serve --tinker answers a finish with the session's status as the SDK describes it, and refuses a reason it does not know.
  const finish = (reason: unknown) =>
    fetch(`${server.url}/api/v1/sessions/session-1/finish`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': KEY },
      body: JSON.stringify({ reason }),
    });
  const ok = await finish({ type: 'interrupted' });
  assert.equal(ok.status, 200);
  assert.deepEqual(await ok.json(), { session_id: 'session-1', status: { type: 'client_finished', reason: { type: 'interrupted' }, detail: null } });
  const bad = await finish({ type: 'exploded' });
  assert.equal(bad.status, 400);
  await bad.body?.cancel();
});

test('serve --tinker: retrieve_futures answers each client of a sampling session its own completions after its cursor; join_sampling_session numbers the clients', async () => {
  const call = async (path: string, body: unknown) => {
    const res = await fetch(`${server.url}/api/v1/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': KEY },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const session = String((await call('create_session', { tags: [], sdk_version: '0.25.0' })).body.session_id);
  const sampling = String(
    (await call('create_sampling_session', { session_id: session, sampling_session_seq_id: 0, base_model: 'tiny' })).body.sampling_session_id,
  );
  const joined = await call('join_sampling_session', { sampling_session_id: sampling, type: 'join_sampling_session' });
  assert.deepEqual(joined.body, { type: 'join_sampling_session', client_counter: 1 });
  const poll = (clone: number, cursor: number, timeout: number) =>
    call('retrieve_futures', { target: { type: 'sampling_session', sampling_session_id: sampling, cloned_sampler_id: clone }, prev_cursor: cursor, timeout });
  const sample = (seq: number) =>
    call('asample', {
      prompt: { chunks: [{ type: 'encoded_text', tokens: [1, 2, 3] }] },
      sampling_params: { max_tokens: 2 },
      sampling_session_id: sampling,
      seq_id: seq,
    });
  // Client 1's sample (seq_ids from 1e9): its poll, held until the sample completes, gets it; client 0's gets nothing.
  const [first, held] = await Promise.all([sample(1_000_000_000), poll(1, 0, 20)]);
  assert.deepEqual(held.body.completions, [{ state: 'finished', request_id: first.body.request_id }]);
  assert.deepEqual((await poll(0, 0, 0)).body, { completions: [], cursor: 0 });
  // Seen completions are dropped: after the cursor, only the next one.
  const second = await sample(1_000_000_001);
  const next = await poll(1, held.body.cursor as number, 20);
  assert.deepEqual(next.body.completions, [{ state: 'finished', request_id: second.body.request_id }]);
  assert.equal((await poll(2, 0, 0)).status, 404, 'a client that never joined');
  assert.equal((await call('retrieve_futures', { target: { type: 'sampling_session', sampling_session_id: 'sampling-nope' } })).status, 404);
  for (const r of [first, second]) await call('retrieve_future', { request_id: r.body.request_id });
});
