import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { parquetReadObjects } from 'hyparquet';
import { readFileSync } from 'node:fs';
import { codepointTokenizer } from '../../src/tokens/index.ts';
import { runRolloutService, WeightsGate, weightsReadyFile, type RolloutServiceEvent } from '../../src/service/index.ts';
import { OpenAIPolicy } from '../../src/policy/index.ts';
import { RunStore } from '../../src/store/index.ts';
import { defaultScript, startStandIn } from '../policy/openai-stand-in.ts';
import { createEstimator, forestFromTrees } from '../../src/advantage/index.ts';

/** Small world configuration: 2 steps of 4 prompts and 8 trajectories. */
export const SERVICE_CONFIG = {
  steps: 2,
  pool: 4,
  strategy: { name: 'trace', budget: 8 },
  env: { questions: 300 },
  engine: { concurrency: 4, retry: { baseDelayMs: 1 } },
};

test('rollout service: one batch per step from a real OpenAI-compatible server, then it waits for the weights file', async () => {
  const server = await startStandIn();
  const out = join(mkdtempSync(join(tmpdir(), 'trace-rollout-')), 'run');
  const policy = new OpenAIPolicy({ baseURLs: [server.url], model: 'stand-in', extras: 'vllm' });
  const gate = new WeightsGate({ dir: out, pollMs: 20 });
  const events: RolloutServiceEvent[] = [];
  try {
    const running = runRolloutService({
      out,
      config: SERVICE_CONFIG,
      policy,
      format: 'verl',
      tokenizer: codepointTokenizer,
      gate,
      clock: () => performance.now(),
      onEvent: (e) => events.push(e),
    });
    while (!events.some((e) => e.kind === 'waiting')) await sleep(20);
    const first = events.find((e): e is Extract<RolloutServiceEvent, { kind: 'batch' }> => e.kind === 'batch')!;
    assert.equal(first.step, 0);
    assert.ok(existsSync(first.file));
    const requests = server.requests;
    await sleep(300);
    assert.equal(server.requests, requests, 'no rollouts while the trainer has not pushed new weights');
    assert.ok(!events.some((e) => e.kind === 'batch' && e.step === 1));

    const rows = await parquetReadObjects({ file: new Uint8Array(readFileSync(first.file)).buffer });
    assert.equal(rows.length, first.rows);
    assert.ok(rows.length > 0);
    for (const row of rows) {
      assert.equal(row.logprobs_known, true, 'the server returned ids and log-probabilities for every turn');
      assert.equal(codepointTokenizer.decode(row.response_ids as number[]), row.response_text);
      const modelLogprobs = (row.response_logprobs as number[]).filter((_, i) => (row.response_mask as number[])[i] === 1);
      assert.ok(
        modelLogprobs.every((v) => v < 0),
        'model tokens carry the server’s log-probabilities',
      );
    }

    writeFileSync(weightsReadyFile(out, 0), '');
    const result = await running;
    assert.equal(result.status, 'finished');
    assert.equal(result.batches.length, 2);
    assert.ok(existsSync(result.batches[1]));
    assert.deepEqual(
      events.filter((e) => e.kind === 'waiting').map((e) => e.step),
      [0],
      'no wait after the last step',
    );
    const store = RunStore.open(out, { readonly: true });
    assert.equal(store.lastStep(), 1);
    assert.equal(store.status(), 'finished');
    const leaves = store.trees(1).reduce((n, t) => n + Object.values(t.nodes).filter((x) => x.parent !== null && x.children.length === 0).length, 0);
    assert.equal(leaves, 8, 'the step spent its budget of 8 trajectories');
    for (const st of store.steps()) {
      assert.ok(!('test_accuracy' in st.metrics) && !('time_eval_ms' in st.metrics), 'no evaluation here: the external trainer owns it');
      assert.ok(!('policy_loss' in st.metrics), 'the policy is not updated here');
      assert.ok('pred_loss' in st.metrics, 'the predictor learns from every step');
      assert.equal(st.details.policy, policy.name);
    }
    store.close();
  } finally {
    await gate.close();
    await server.close();
  }
});

test('a holder of the weights token cannot announce steps ahead: the running service refuses them and waits for its trainer (issue 69)', async () => {
  const server = await startStandIn();
  const out = join(mkdtempSync(join(tmpdir(), 'trace-rollout-')), 'run');
  const policy = new OpenAIPolicy({ baseURLs: [server.url], model: 'stand-in', extras: 'vllm' });
  const gate = new WeightsGate({ dir: out, port: 0, pollMs: 20 });
  await gate.start();
  const events: RolloutServiceEvent[] = [];
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${gate.token}` };
  const announce = (step: number) => fetch(`${gate.url}/weights`, { method: 'POST', body: JSON.stringify({ step }), headers });
  try {
    // Before the first batch, every step of the run (the attack: a run finished with no trainer).
    const early = await Promise.all([0, 1, 2].map(announce));
    assert.deepEqual(
      early.map((r) => r.status),
      [409, 409, 409],
    );
    const running = runRolloutService({
      out,
      config: { ...SERVICE_CONFIG, steps: 3 },
      policy,
      format: 'verl',
      tokenizer: codepointTokenizer,
      gate,
      clock: () => performance.now(),
      onEvent: (e) => events.push(e),
    });
    while (!events.some((e) => e.kind === 'waiting')) await sleep(20);
    const ahead = await announce(1);
    assert.equal(ahead.status, 409);
    const { error } = (await ahead.json()) as { error: { code: string; message: string } };
    assert.equal(error.code, 'step_not_awaited');
    assert.equal(
      error.message,
      'step 1 is not awaited: the service is waiting for the weights of step 0; announce a step once the trainer has trained on its batch and loaded the new weights',
    );
    await sleep(200);
    assert.ok(!events.some((e) => e.kind === 'batch' && e.step === 1), 'still waiting for the trainer');
    assert.equal((await announce(0)).status, 200);
    while (events.filter((e) => e.kind === 'waiting').length < 2) await sleep(20);
    assert.equal((await announce(2)).status, 409);
    assert.equal((await announce(1)).status, 200);
    assert.equal((await running).status, 'finished');
  } finally {
    await gate.close();
    await server.close();
  }
});

test('weights gate: an HTTP POST releases the wait; bad bodies are refused with the expected shape', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'trace-gate-'));
  const gate = new WeightsGate({ dir, port: 0, pollMs: 20 });
  await gate.start();
  try {
    let released = false;
    const waiting = gate.wait(3).then(() => (released = true));
    await sleep(50);
    assert.deepEqual(await (await fetch(`${gate.url}/status`)).json(), { waiting: 3, ready: [] });
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${gate.token}` };
    const bad = await fetch(`${gate.url}/weights`, { method: 'POST', body: '{"step": "three"}', headers });
    assert.equal(bad.status, 400);
    assert.match(((await bad.json()) as { error: { message: string } }).error.message, /non-negative integer/);
    assert.equal(released, false);
    const ok = await fetch(`${gate.url}/weights`, { method: 'POST', body: JSON.stringify({ step: 3 }), headers });
    assert.equal(ok.status, 200);
    await waiting;
    assert.equal(released, true);
    const stop = new AbortController();
    const aborted = gate.wait(4, stop.signal);
    stop.abort();
    await assert.rejects(aborted, { name: 'WeightsWaitAborted' });
  } finally {
    await gate.close();
  }
});

test('rollout service: batches carry the configured advantageScale (none = unscaled deviations, as train and export give)', async () => {
  // Comparative questions ("…, A or B?") are answered A and B in turn, so groups have mixed rewards and
  // a std ≠ 1 that scaling would divide by.
  let answers = 0;
  const script = (conversation: string) => {
    const dialogue = conversation.slice(conversation.lastIndexOf('Question:'));
    const options = /, (.+) or (.+)\?/.exec(dialogue);
    if (!options || !dialogue.includes('<information>')) return defaultScript(conversation);
    return `<answer>${options[1 + (answers++ % 2)]}</answer>`;
  };
  const server = await startStandIn({ script });
  const out = join(mkdtempSync(join(tmpdir(), 'trace-rollout-')), 'run');
  const policy = new OpenAIPolicy({ baseURLs: [server.url], model: 'stand-in', extras: 'vllm' });
  const gate = new WeightsGate({ dir: out, pollMs: 20 });
  try {
    const result = await runRolloutService({
      out,
      config: { ...SERVICE_CONFIG, steps: 1, advantageScale: 'none' },
      policy,
      format: 'jsonl',
      tokenizer: codepointTokenizer,
      gate,
      clock: () => performance.now(),
    });
    assert.equal(result.config.advantageScale, 'none');
    const rows = readFileSync(result.batches[0], 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { leaf_id: string; advantage: number });
    const store = RunStore.open(out, { readonly: true });
    const forest = forestFromTrees(store.trees(0));
    store.close();
    const unscaled = createEstimator('trace', { scale: 'none' }).estimate(forest);
    const scaled = createEstimator('trace', { scale: 'std' }).estimate(forest);
    assert.notDeepEqual(
      unscaled.map((e) => e.advantage),
      scaled.map((e) => e.advantage),
      'the step has mixed groups, where the two scales differ',
    );
    assert.deepEqual(
      rows.map((r) => [r.leaf_id, r.advantage]),
      unscaled.map((e) => [e.id, e.advantage]),
    );
  } finally {
    await gate.close();
    await server.close();
  }
});
