/**
 * trace's `expansionRounds` (TRACE-SPEC §3 step 4's open point) on the real simulator and the real
 * trace strategy: a prompt's m · N continuations are spread over R rounds; round r > 0 plans over the
 * prefixes of round r − 1's continuations only, after they finish.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createStrategy } from '../../src/allocate/index.ts';
import type { PrefixRoundInput } from '../../src/allocate/types.ts';
import { runStep } from '../../src/rollout/index.ts';
import { getNode, root, type RolloutTree } from '../../src/tree/index.ts';
import { createRng } from '../../src/util/rng.ts';
import { sim, treeCounts } from './helpers.ts';

const fast = { retry: { baseDelayMs: 1, maxDelayMs: 2 } };

/** Continuations whose start node hangs below another continuation's node (expanded in a later round). */
function nested(trees: readonly RolloutTree[]): number {
  let n = 0;
  for (const t of trees) {
    for (const node of Object.values(t.nodes)) {
      if (node.origin !== 'continuation' || !node.parent) continue;
      const parent = getNode(t, node.parent);
      if (parent.origin === 'continuation' && parent.children[0] !== node.id) n++;
    }
  }
  return n;
}

test('expansionRounds: 2 splits each prompt’s m · N over two rounds, the second on the first round’s continuations', async () => {
  const { env, policy, prompts } = sim();
  const base = createStrategy('trace', { budget: 24, continuations: 2, expansionRounds: 2 });
  const seen: PrefixRoundInput[] = [];
  const strategy = { ...base, prefixes: { ...base.prefixes!, plan: (input: PrefixRoundInput) => (seen.push(input), base.prefixes!.plan(input)) } };
  assert.deepEqual(strategy.prefixes.schedule, { kind: 'per-prompt', rounds: 2, offersRoot: false });
  const res = await runStep({ prompts, env, policy, rng: createRng(3), strategy, settings: fast });
  const byPrompt = new Map<string, PrefixRoundInput[]>();
  for (const s of seen) byPrompt.set(s.promptId, [...(byPrompt.get(s.promptId) ?? []), s]);
  assert.ok(byPrompt.size > 0);
  let secondRounds = 0;
  for (const [id, inputs] of byPrompt) {
    const m = res.rounds[0].get(id)!;
    assert.equal(inputs[0].round, 0);
    assert.equal(inputs[0].budget, Math.floor((m * 2) / 2), 'round 0 gets ⌊m·N / 2⌋');
    const tree = res.trees.find((t) => t.promptId === id)!;
    if (inputs.length < 2) continue;
    secondRounds++;
    assert.equal(inputs[1].round, 1);
    // Round 1's candidates are nodes of round 0's continuations, never of the bare rollouts.
    for (const c of inputs[1].prefixes) assert.equal(getNode(tree, c.id).origin, 'continuation', `${c.id} is a continuation's node`);
  }
  assert.ok(secondRounds > 0, 'some prompt had a second round');
  assert.ok(nested(res.trees) > 0, 'continuations branch from continuations');
  const c = treeCounts(res.trees);
  assert.equal(c.bare + c.continuation, 24, 'the whole budget is spent (leftover tops up what rounds could not place)');
  assert.equal(res.spend.bare + res.spend.continuation, 24);
});

test('expansionRounds: 1 (the paper, default) never branches from a continuation; the option is trace’s only', async () => {
  const { env, policy, prompts } = sim();
  const res = await runStep({ prompts, env, policy, rng: createRng(3), strategy: createStrategy('trace', { budget: 24, continuations: 2 }), settings: fast });
  assert.equal(nested(res.trees), 0);
  for (const t of res.trees) for (const id of root(t).children) assert.equal(getNode(t, id).origin, 'bare');
  assert.throws(() => createStrategy('random-tree', { budget: 24, expansionRounds: 2 } as never), /expansionRounds/);
  assert.throws(() => createStrategy('trace', { budget: 24, expansionRounds: 0 }), /expansionRounds/);
});
