/**
 * trace's `rootResample` (docs/allocation.md §4) on the real simulator, the real engine and the real
 * trace strategy: while a prompt's bare outcomes all agree, its root is one more candidate of the
 * prefix solver, and K there becomes K more bare rollouts of that prompt.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ZodError } from 'zod';
import { createStrategy, strategyFromConfig } from '../../src/allocate/index.ts';
import type { PrefixRoundInput } from '../../src/allocate/types.ts';
import { runStep } from '../../src/rollout/index.ts';
import { getNode, root, type RolloutTree } from '../../src/tree/index.ts';
import { createRng } from '../../src/util/rng.ts';
import { sim, treeCounts } from './helpers.ts';

const fast = { retry: { baseDelayMs: 1, maxDelayMs: 2 } };

/** The rewards of a tree's bare rollouts, and their turns. */
function bareOutcomes(tree: RolloutTree): Array<{ r: number; turns: number }> {
  return root(tree)
    .children.filter((id) => getNode(tree, id).origin === 'bare')
    .map((id) => {
      let n = getNode(tree, id);
      let turns = 1;
      while (n.children.length > 0) {
        n = getNode(tree, n.children[0]);
        turns++;
      }
      return { r: n.reward!, turns };
    });
}

test('rootResample: the root is offered (depth 0, q = Ṽ(prompt), r = the agreed outcome) only while bare outcomes agree', async () => {
  const { env, policy } = sim(11);
  const prompts = env.prompts(16);
  const base = createStrategy('trace', { budget: 48, roots: 'uniform', prefixes: 'decision-weighted', rootResample: true });
  assert.equal(base.prefixes!.schedule?.offersRoot, true);
  const seen: Array<{ input: PrefixRoundInput; bare: Array<{ r: number; turns: number }> }> = [];
  const trees = new Map<string, RolloutTree>();
  // The real planner; the wrapper only records what the engine offered it, before anything else runs.
  const strategy = {
    ...base,
    prefixes: { ...base.prefixes!, plan: (input: PrefixRoundInput) => (seen.push({ input, bare: [] }), base.prefixes!.plan(input)) },
  };
  const scorer = (hs: readonly { turns: readonly unknown[] }[]) => hs.map((h) => (h.turns.length === 0 ? 0.4 : 0.6));
  const res = await runStep({ prompts, env, policy, rng: createRng(5), strategy, scorer, settings: fast });
  for (const t of res.trees) trees.set(t.promptId, t);
  let offered = 0;
  let withheld = 0;
  for (const { input } of seen) {
    const tree = trees.get(input.promptId)!;
    // The first m bare children are the ones the planner saw (extra ones come after, in later slots).
    const first = bareOutcomes(tree).slice(0, input.m);
    const agree = first.every((o) => o.r === first[0].r);
    const rootCandidate = input.prefixes.find((c) => c.id === input.promptId);
    if (!agree) {
      withheld++;
      assert.equal(rootCandidate, undefined, `${input.promptId}: a mixed root group is not offered`);
      continue;
    }
    offered++;
    assert.ok(rootCandidate, `${input.promptId}: agreeing outcomes → the root is offered`);
    assert.equal(rootCandidate.kind, 'root', 'the candidate says what K there means: more bare rollouts');
    assert.ok(
      input.prefixes.every((c) => c === rootCandidate || c.kind === undefined),
      'every other candidate is a prefix',
    );
    assert.equal(rootCandidate.depth, 0);
    assert.equal(rootCandidate.q, 0.4, 'q = Ṽ(prompt), the empty history');
    assert.equal(rootCandidate.r, first[0].r);
    assert.equal(rootCandidate.after, first.reduce((a, o) => a + o.turns, 0) / first.length, 'weight = mean turns of the bare rollouts');
  }
  assert.ok(offered > 0 && withheld > 0, `both cases occur (offered ${offered}, withheld ${withheld})`);
  const c = treeCounts(res.trees);
  assert.equal(c.bare + c.continuation, 48, 'the whole budget is spent');
  assert.equal(res.spend.bare + res.spend.continuation, 48);
});

test('rootResample: K at the root runs K more bare rollouts of that prompt (slots after the first m), not continuations', async () => {
  const { env, policy, prompts } = sim(3);
  const base = createStrategy('trace', { budget: 12, roots: 'uniform', rootResample: true });
  // Put every continuation on the root whenever it is offered, to see what the engine does with it.
  const strategy = {
    ...base,
    prefixes: {
      ...base.prefixes!,
      plan: (input: PrefixRoundInput) =>
        input.prefixes.some((p) => p.id === input.promptId) ? new Map([[input.promptId, input.budget]]) : base.prefixes!.plan(input),
    },
  };
  const scorer = (hs: readonly { turns: readonly unknown[] }[]) => hs.map(() => 0.5);
  const res = await runStep({ prompts, env, policy, rng: createRng(1), strategy, scorer, settings: fast });
  const roots = res.rounds[0];
  let resampled = 0;
  for (const tree of res.trees) {
    const m = roots.get(tree.promptId)!;
    const bare = root(tree).children.filter((id) => getNode(tree, id).origin === 'bare');
    const first = bareOutcomes(tree).slice(0, m);
    if (first.every((o) => o.r === first[0].r)) {
      resampled++;
      assert.equal(bare.length, m + m * 2, `${tree.promptId}: m bare + m·N resampled bare rollouts`);
      assert.equal(treeCounts([tree]).continuation, 0);
    }
  }
  assert.ok(resampled > 0, 'some prompt had agreeing outcomes');
  assert.equal(res.spend.bare + res.spend.continuation, 12);
});

test('rootResample: the solver weighs the root against prefixes (exact, decision-weighted); misplaced use is rejected', () => {
  const s = createStrategy('trace', { budget: 9, prefixes: 'decision-weighted', rootResample: true });
  // Root: q = 0.5, r = 0 → ρ = ½, weight 3 (mean turns): gains 1.5, 0.75, 0.375. Prefix: q = 0.2, r = 0
  // → ρ = 0.8, weight 2: gains 0.4, 0.32. Budget 3 → root 1.5, 0.75, then 0.4 (prefix) > 0.375.
  const input = {
    promptId: 'x',
    m: 2,
    budget: 3,
    rng: createRng(0),
    prefixes: [
      { id: 'x', q: 0.5, r: 0, depth: 0, after: 3 },
      { id: 'x/0/0', q: 0.2, r: 0, depth: 1, after: 2 },
    ],
  };
  assert.deepEqual(Object.fromEntries(s.prefixes!.plan(input)), { x: 2, 'x/0/0': 1 });
  assert.equal(createStrategy('trace', { budget: 9 }).prefixes!.schedule?.offersRoot, false, 'the paper offers prefixes only');
  assert.throws(() => strategyFromConfig({ name: 'trace', budget: 9, prefixes: 'uniform', rootResample: true }), /rootResample: true needs the prefix solver/);
  assert.throws(() => strategyFromConfig({ name: 'random-tree', budget: 9, rootResample: true }), /trace only/);
  assert.throws(() => strategyFromConfig({ name: 'trace', budget: 9, rootResample: 'yes' }), ZodError);
});
