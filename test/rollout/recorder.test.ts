import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Recording, RecordingFormatError, ReplayMissError, runStep } from '../../src/rollout/index.ts';
import type { Policy } from '../../src/policy/types.ts';
import { createRng } from '../../src/util/rng.ts';
import { InstrumentedPolicy, SpyEnv, fixedAllocator, scrambledDelay, serverError, sim } from './helpers.ts';

const settings = { retry: { baseDelayMs: 1, maxDelayMs: 2 }, concurrency: 4 };

/** A policy that must never be called: replay needs no server. */
const unreachable: Policy = {
  name: 'unreachable',
  act: () => {
    throw new Error('replay called the policy');
  },
};

test('record a run with failures, replay it without policy or tools: identical trees and spend', async () => {
  const { env: inner, policy, prompts } = sim(11);
  let n = 0;
  const flaky = new InstrumentedPolicy(policy, {
    delayMs: scrambledDelay(3, 5),
    fail: (ctx) => (ctx.callId!.endsWith('#1') && n++ % 3 === 0 ? serverError() : undefined),
  });
  const toolFlaky = new SpyEnv(inner, (a, k) => a.type === 'search' && k % 5 === 0);
  const recording = new Recording();
  const live = await runStep({ prompts, env: toolFlaky, policy: flaky, rng: createRng(3), strategy: fixedAllocator(3, 2, 2), settings, record: recording });
  assert.ok(Object.keys(live.failures).length + flaky.calls > 0);
  assert.ok(
    [...recording.entries.values()].some((e) => e.kind === 'policy_error'),
    'failures were recorded',
  );

  // Through the file format, and with an environment whose tools always fail.
  const reread = Recording.fromJSONL(recording.toJSONL());
  const noTools = new SpyEnv(inner, () => true);
  const replayed = await runStep({
    prompts,
    env: noTools,
    policy: unreachable,
    rng: createRng(3),
    strategy: fixedAllocator(3, 2, 2),
    settings,
    replay: reread,
  });
  assert.equal(noTools.steps, 0, 'replay called no tool');
  assert.deepEqual(replayed.trees, live.trees);
  assert.deepEqual(replayed.spend, live.spend);
  assert.deepEqual(replayed.failures, live.failures);
});

test('a replay that diverges from the recording fails loudly', async () => {
  const { env, policy, prompts } = sim(11);
  const recording = new Recording();
  await runStep({ prompts, env, policy, rng: createRng(3), rootPlan: new Map([[prompts[0].id, 2]]), settings, record: recording });
  await assert.rejects(
    runStep({ prompts, env, policy: unreachable, rng: createRng(3), rootPlan: new Map([[prompts[0].id, 3]]), settings, replay: recording }),
    ReplayMissError,
  );
});

test('a malformed recording names the line and the field', () => {
  const good = JSON.stringify({ key: 'policy:a/0#1', kind: 'policy', output: { text: 'x', generatedTokens: 1 } });
  assert.equal(Recording.fromJSONL(good + '\n').size, 1);
  assert.throws(
    () => Recording.fromJSONL(good + '\n{"key":"tool:a/0#1","kind":"step","outcome":{"done":true}}\n', 'run.jsonl'),
    (e: Error) => {
      assert.ok(e instanceof RecordingFormatError);
      assert.match(e.message, /run\.jsonl:2: field "outcome\.observation"/);
      return true;
    },
  );
  assert.throws(() => Recording.fromJSONL('{oops', 'run.jsonl'), /run\.jsonl:1: not JSON/);
});
