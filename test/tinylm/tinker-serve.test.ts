/**
 * The Tinker path end to end on the CPU: `trace-rl serve --tinker` (llama.cpp samples, jax-js trains)
 * answers the Tinker API, and `trace-rl train --policy tinker --base-url` runs the loop through it.
 * Same seeds as the in-process tiny-LM run: the trees of every step are the same token for token.
 * A random-weight model never answers, so those runs' advantages are all 0; the update itself is
 * checked on the same run's real trees with advantages of both signs: one Tinker update
 * (forward_backward + optim_step per epoch, then sampler weights) moves the model exactly as the
 * in-process update does, to float rounding. The project's warm-started tiny LM then learns through
 * the API with the in-process learning curve: per step the same loss (to 1e-4) and mean reward (to
 * one trajectory of the step's 16; float rounding of two gradient programs may flip a sampled token
 * after an update — on this machine the trees were identical at every step).
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { RunStore } from '../../src/store/index.ts';
import { train } from '../../src/train/index.ts';
import { leaves, turnsTo, type RolloutTree } from '../../src/tree/index.ts';
import { loadTranscript } from '../../src/tokens/index.ts';
import { TinkerPolicy } from '../../src/policy/tinker/index.ts';
import type { PolicySample } from '../../src/policy/types.ts';
import { TinyLmPolicy } from '../../src/tinylm/index.ts';
import { createRng } from '../../src/util/rng.ts';
import { initJax } from '../../src/util/jax.ts';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startServe } from '../helpers/run-cli.ts';
// The client side of every run goes through the real CLI in this process (a spawned CLI costs ~1.5 s of
// CPU to load); the Tinker server is the real `trace-rl serve --tinker` in its own process.
import { runCli } from '../reliability/cli-in-process.ts';
import { fixture, writeTemp } from './fixtures.ts';

const { model, env } = fixture({}, 4);
const file = writeTemp(model, 'tiny.gguf');
const dir = mkdtempSync(join(tmpdir(), 'tinker-serve-'));
const keyFile = join(dir, 'key');
writeFileSync(keyFile, 'test-key-0123\n');
let child: ChildProcess;
let root = '';

// Two steps: step 1 samples the model after step 0's update (and, in the resume test, runs after the resume).
const STEPS = 2;
const common = {
  seed: 5,
  steps: STEPS,
  pool: 3,
  env: { questions: 300, seed: 7 },
  strategy: { name: 'trace', preset: 'paper', budget: 6, continuations: 2 },
  engine: { maxTurns: 2, concurrency: 4 },
  eval: { every: 10, questions: 2 },
};
const rl = { learningRate: 0.01, epochs: 2 };

before(async () => {
  ({ child, baseURL: root } = await startServe(file, ['--tinker', '--tinker-key-file', keyFile, '--parallel', '4']));
  root = root.replace(/\/v1$/, '');
});
after(() => child.kill('SIGTERM'));

/** Every leaf path's generated ids, per tree, in a stable order. */
function paths(trees: readonly RolloutTree[]): string[] {
  return trees.flatMap((t) =>
    leaves(t).map(
      (leaf) =>
        `${leaf.id}:` +
        Object.values(t.nodes)
          .filter((n) => leaf.id.startsWith(n.id) && n.turn?.tokens)
          .sort((a, b) => a.id.length - b.id.length)
          .map((n) => n.turn!.tokens!.ids.join(','))
          .join('|'),
    ),
  );
}

test('train --policy tinker against serve --tinker runs the tiny LM’s loop as the in-process run does: the same trees every step', async () => {
  const local = join(dir, 'local');
  await train({ out: local, config: { ...common, policy: { kind: 'tiny-lm', model: file, ...rl } }, clock: () => 0 });

  const remote = join(dir, 'remote');
  const config = join(dir, 'tinker.json');
  writeFileSync(
    config,
    JSON.stringify({
      ...common,
      policy: { kind: 'tinker', model: 'tiny', tokenizer: 'server', prompt: 'question', maxTokensPerTurn: 64, apiKeyFile: keyFile, ...rl },
    }),
  );
  const r = await runCli(['train', '--config', config, '--policy', 'tinker', '--base-url', root, '--out', remote, '--quiet']);
  assert.equal(r.code, 0, r.stderr);

  const a = RunStore.open(local, { readonly: true });
  const b = RunStore.open(remote, { readonly: true });
  try {
    assert.deepEqual(paths(b.trees(0)), paths(a.trees(0)), 'step 0: the same trees, token for token');
    const ma = a.steps();
    const mb = b.steps();
    assert.equal(mb.length, STEPS);
    // The same update: the loss of step 0 (the surrogate over the same tokens) agrees to float rounding.
    assert.ok(
      Math.abs(ma[0]!.metrics.policy_loss! - mb[0]!.metrics.policy_loss!) < 1e-4,
      `loss ${ma[0]!.metrics.policy_loss} vs ${mb[0]!.metrics.policy_loss}`,
    );
    for (let s = 0; s < STEPS; s++) {
      const x = ma[s]!.metrics;
      const y = mb[s]!.metrics;
      // Float rounding can flip a sampled token after the first update; the curve stays within 0.2 of reward.
      assert.ok(Math.abs(x.reward_mean! - y.reward_mean!) <= 0.2, `step ${s}: success ${x.reward_mean} vs ${y.reward_mean}`);
    }
  } finally {
    a.close();
    b.close();
  }
});

test('a tinker run resumes (the checkpoint names the engine’s saved state) and exports token-exact rows', async () => {
  const resumed = join(dir, 'resumed');
  const config = join(dir, 'tinker.json');
  // Stopped after step 0 (one step), then resumed to the full length: the same trees as the uninterrupted run.
  const first = await runCli(['train', '--config', config, '--policy', 'tinker', '--base-url', root, '--out', resumed, '--steps', '1', '--quiet']);
  assert.equal(first.code, 0, first.stderr);
  const again = await runCli(['train', '--resume', resumed, '--steps', String(STEPS), '--quiet']);
  assert.equal(again.code, 0, again.stderr);
  const a = RunStore.open(join(dir, 'remote'), { readonly: true });
  const b = RunStore.open(resumed, { readonly: true });
  try {
    assert.equal(b.steps().length, STEPS);
    for (let s = 0; s < STEPS; s++) assert.deepEqual(paths(b.trees(s)), paths(a.trees(s)), `step ${s}`);
    const snapshot = JSON.parse(new TextDecoder().decode(b.checkpoints(STEPS - 1).policy!)) as { format: string; state: string };
    assert.equal(snapshot.format, 'trace-rl/tinker@1');
    assert.match(snapshot.state, /^tinker:\/\/model-[0-9a-f]+\/weights\//);
  } finally {
    a.close();
    b.close();
  }
  const rows = join(dir, 'rows.jsonl');
  const r = await runCli(['export', resumed, '--format', 'jsonl', '--out', rows, '--tokenizer', `server:${root}`]);
  assert.equal(r.code, 0, r.stderr);
  const exported = readFileSync(rows, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { token_exact: boolean; logprobs_known: boolean; response_ids: number[] });
  assert.ok(exported.length > 0);
  assert.ok(exported.every((x) => x.token_exact && x.logprobs_known));
});

test('one update through the Tinker API is the in-process update: same loss, same new weights', async () => {
  await initJax();
  const store = RunStore.open(join(dir, 'local'), { readonly: true });
  const trees = store.trees(0);
  store.close();
  const prompts = new Map(env.train.map((p) => [p.id, p]));
  // Every leaf path with advantages of alternating sign, one per turn: both sides of a group move.
  const samples: PolicySample[] = trees.flatMap((t) =>
    leaves(t).map((leaf, i) => {
      const turns = turnsTo(t, leaf.id);
      return { prompt: prompts.get(t.promptId)!, turns, advantages: turns.map(() => (i % 2 ? -1 : 1)) };
    }),
  );
  const options = { learningRate: 0.05, clip: 0.2, epochs: 2, normalise: 'turns' as const };
  const local = TinyLmPolicy.fromBytes(new Uint8Array(readFileSync(file)), { sequences: 2 });
  const remote = new TinkerPolicy({
    baseURL: root,
    baseModel: 'tiny',
    loraRank: 1,
    apiKey: 'test-key-0123',
    transcript: await loadTranscript('server', { serverURL: root }),
    prompt: 'question',
    temperature: 1,
    maxTokensPerTurn: 64,
    stop: ['</search>', '</answer>'],
    adam: { beta1: 0.9, beta2: 0.999, eps: 1e-8, gradClipNorm: 1 },
  });
  try {
    const x = await local.update(samples, options);
    const y = await remote.update(samples, options);
    assert.ok(x.turns > 0 && x.loss !== 0, 'the update had a gradient');
    assert.equal(y.turns, x.turns);
    assert.ok(Math.abs(x.loss - y.loss) < 1e-5, `loss ${x.loss} vs ${y.loss}`);
    assert.ok(Math.abs(x.entropy - y.entropy) < 1e-9);
    // The new weights: the same prompt sampled with one seed gives the same tokens and log-probabilities.
    const ctx = (rng: number) => ({ prompt: env.train[0]!, rendered: '', turns: [], rng: createRng(rng), maxTokens: 64 });
    for (const seed of [1, 2, 3]) {
      const a = await local.act(ctx(seed));
      const b = await remote.act(ctx(seed));
      assert.deepEqual(b.tokens!.ids, a.tokens!.ids, `seed ${seed}: the same tokens after the update`);
      b.tokens!.logprobs.forEach((l, i) => assert.ok(Math.abs(l - a.tokens!.logprobs[i]!) < 1e-3, `token ${i}: ${l} vs ${a.tokens!.logprobs[i]}`));
    }
    // And they moved: the updated policy is not the initial one.
    const before = TinyLmPolicy.fromBytes(new Uint8Array(readFileSync(file)), { sequences: 1 });
    const c = await before.act(ctx(1));
    const a = await local.act(ctx(1));
    await before.dispose();
    assert.ok(
      c.tokens!.ids.join() !== a.tokens!.ids.join() || c.tokens!.logprobs.some((l, i) => Math.abs(l - a.tokens!.logprobs[i]!) > 1e-3),
      'the update changed the policy',
    );
  } finally {
    await local.dispose();
  }
});

test('the warm-started tiny LM learns through the Tinker API as it does in process: the same learning curve', async () => {
  // The project's warm start answers a few world questions, so groups are mixed and updates carry gradient.
  const warm = fileURLToPath(new URL('../../bench/tinylm/warm-start.gguf', import.meta.url));
  const served = await startServe(warm, ['--tinker', '--tinker-key-file', keyFile, '--parallel', '4']);
  const url = served.baseURL.replace(/\/v1$/, '');
  try {
    // Seed 2: mixed groups at step 0 with 8 prompts of 2 trajectories.
    const run = { seed: 2, steps: 2, pool: 8, strategy: { name: 'grpo', budget: 16 }, eval: { every: 10, questions: 2 } };
    const rate = { learningRate: 0.003, epochs: 1 };
    const local = join(dir, 'warm-local');
    await train({ out: local, config: { ...run, policy: { kind: 'tiny-lm', model: warm, ...rate } }, clock: () => 0 });
    const config = join(dir, 'warm-tinker.json');
    writeFileSync(
      config,
      JSON.stringify({
        ...run,
        policy: { kind: 'tinker', model: 'warm-start', tokenizer: 'server', prompt: 'question', maxTokensPerTurn: 64, apiKeyFile: keyFile, ...rate },
      }),
    );
    const remote = join(dir, 'warm-tinker');
    const r = await runCli(['train', '--config', config, '--policy', 'tinker', '--base-url', url, '--out', remote, '--quiet']);
    assert.equal(r.code, 0, r.stderr);
    const a = RunStore.open(local, { readonly: true });
    const b = RunStore.open(remote, { readonly: true });
    try {
      const ma = a.steps().map((x) => x.metrics);
      const mb = b.steps().map((x) => x.metrics);
      // Step 0 had mixed groups (a gradient), so step 1 samples the model as updated through the API.
      assert.ok(ma[0]!.policy_loss !== 0, 'step 0 had mixed groups (a gradient)');
      assert.equal(mb.length, 2);
      for (let s = 0; s < 2; s++) {
        // Tolerance: float rounding of two gradient programs (packing differs) may flip a sampled token after an update.
        assert.ok(Math.abs(ma[s]!.policy_loss! - mb[s]!.policy_loss!) < 1e-4, `step ${s}: loss ${ma[s]!.policy_loss} vs ${mb[s]!.policy_loss}`);
        assert.ok(Math.abs(ma[s]!.reward_mean! - mb[s]!.reward_mean!) <= 1 / 16 + 1e-9, `step ${s}: reward ${ma[s]!.reward_mean} vs ${mb[s]!.reward_mean}`);
      }
      assert.deepEqual(paths(b.trees(0)), paths(a.trees(0)));
    } finally {
      a.close();
      b.close();
    }
  } finally {
    served.child.kill('SIGTERM');
  }
});

test('the Tinker API refuses a wrong key, a web page and a non-JSON body', async () => {
  const post = (headers: Record<string, string>, body = '{}') => fetch(`${root}/api/v1/create_session`, { method: 'POST', headers, body });
  assert.equal((await post({ 'content-type': 'application/json', 'x-api-key': 'wrong' })).status, 401);
  assert.equal((await post({ 'content-type': 'application/json', 'x-api-key': 'test-key-0123', origin: 'http://evil.example' })).status, 403);
  assert.equal((await post({ 'content-type': 'text/plain', 'x-api-key': 'test-key-0123' })).status, 415);
  assert.equal((await post({ 'content-type': 'application/json', 'x-api-key': 'test-key-0123' })).status, 200);
});
