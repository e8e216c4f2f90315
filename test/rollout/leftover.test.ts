/**
 * The engine's leftover phase (phase 4 of runStep) on the real simulator: trajectories still under the
 * strategy's cap once every continuation has run become extra bare rollouts, planned by the
 * strategy's leftover part and run after all continuations.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { LeftoverInput } from '../../src/allocate/types.ts';
import { EngineError, runStep, type EngineEvent } from '../../src/rollout/index.ts';
import { getNode, root } from '../../src/tree/index.ts';
import { createRng } from '../../src/util/rng.ts';
import { fixedAllocator, sim, treeCounts } from './helpers.ts';

const fast = { retry: { baseDelayMs: 1, maxDelayMs: 2 } };

test('leftover: what the cap still allows after the continuations becomes extra bare rollouts, run last', async () => {
  const { env, policy, prompts } = sim();
  const seen: LeftoverInput[] = [];
  // 2 roots per prompt (8), 1 continuation on one prefix of each prompt (≤ 4), cap 20: ≥ 8 left over.
  const strategy = {
    ...fixedAllocator(2, 1, 1),
    cap: 20,
    leftover: {
      plan(input: LeftoverInput) {
        seen.push(input);
        return new Map([[prompts[1].id, input.remaining]]);
      },
    },
  };
  const events: EngineEvent[] = [];
  const res = await runStep({ prompts, env, policy, rng: createRng(5), strategy, settings: fast, onEvent: (e) => events.push(e) });
  assert.equal(seen.length, 1, 'planned once');
  const input = seen[0];
  assert.deepEqual([...input.roots.values()], [2, 2, 2, 2], 'bare rollouts per prompt before the top-up');
  assert.equal(input.remaining, 20 - 8 - res.spend.continuation, 'remaining = cap − bare − continuations');
  assert.ok(input.remaining > 0);
  assert.deepEqual(
    input.candidates.map((c) => c.promptId),
    prompts.map((p) => p.id),
  );
  // Spent: the whole cap; the extra rollouts are bare, in the next slots, not expanded.
  assert.equal(res.spend.bare + res.spend.continuation, 20);
  const c = treeCounts(res.trees);
  assert.equal(c.bare + c.continuation, 20);
  const t1 = res.trees[1];
  const slots = root(t1).children.filter((id) => getNode(t1, id).origin === 'bare');
  assert.equal(slots.length, 2 + input.remaining);
  assert.deepEqual(
    slots.map((id) => Number(id.split('/').pop())),
    Array.from({ length: slots.length }, (_, i) => i),
  );
  for (const id of slots.slice(2)) assert.equal(getNode(t1, id).expanded, undefined);
  // It is the last round, and every continuation had finished before it was planned.
  assert.equal(res.rounds.length, 2);
  const topUpAt = events.findIndex((e) => e.kind === 'roots' && e.round === 1);
  assert.ok(topUpAt > 0);
  assert.ok(
    events.slice(topUpAt).every((e) => e.kind !== 'trajectory' || e.origin === 'bare'),
    'no continuation after the top-up',
  );
  const before = events[topUpAt].progress;
  assert.equal(before.continuationDone, before.continuationPlanned);
});

test('leftover: nothing left, or a fixed root plan, means no top-up call', async () => {
  const { env, policy, prompts } = sim();
  let calls = 0;
  const leftover = { plan: () => (calls++, new Map<string, number>()) };
  await runStep({ prompts, env, policy, rng: createRng(5), strategy: { ...fixedAllocator(2, 0, 0), cap: 8, leftover }, settings: fast });
  assert.equal(calls, 0, 'the roots used the whole cap');
  await runStep({ prompts, env, policy, rng: createRng(5), strategy: { ...fixedAllocator(2, 0, 0), cap: 9, leftover }, settings: fast });
  assert.equal(calls, 1);
});

test('leftover: a plan over the remaining budget or naming an unknown prompt is an EngineError', async () => {
  const { env, policy, prompts } = sim();
  const over = { plan: (i: LeftoverInput) => new Map([[prompts[0].id, i.remaining + 1]]) };
  await assert.rejects(
    runStep({ prompts, env, policy, rng: createRng(5), strategy: { ...fixedAllocator(2, 0, 0), cap: 10, leftover: over }, settings: fast }),
    EngineError,
  );
  const unknown = { plan: () => new Map([['nope', 1]]) };
  await assert.rejects(
    runStep({ prompts, env, policy, rng: createRng(5), strategy: { ...fixedAllocator(2, 0, 0), cap: 10, leftover: unknown }, settings: fast }),
    /"nope"/,
  );
});
