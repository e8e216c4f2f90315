/**
 * trace's `prefixBudget: shared` (docs/allocation.md §4) on the real simulator, the real engine and
 * the real trace strategy: once every bare rollout of the step has finished, one prefix plan spends
 * Σ ⌊m_i · N⌋ over the prefixes of all prompts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createStrategy, strategyFromConfig } from '../../src/allocate/index.ts';
import { solvePrefixes } from '../../src/allocate/solvers/prefix-solver.ts';
import type { PrefixRoundInput } from '../../src/allocate/types.ts';
import { runStep } from '../../src/rollout/index.ts';
import { getNode } from '../../src/tree/index.ts';
import { createRng } from '../../src/util/rng.ts';
import { sim, treeCounts } from './helpers.ts';

const fast = { retry: { baseDelayMs: 1, maxDelayMs: 2 } };

test('prefixBudget shared: one plan for the step, over every prompt’s prefixes, with the summed budget, placed exactly', async () => {
  const { env, policy } = sim(11);
  const prompts = env.prompts(16);
  const base = createStrategy('trace', { budget: 48, roots: 'uniform', prefixes: 'decision-weighted', prefixBudget: 'shared' });
  assert.equal(base.prefixes!.schedule?.kind, 'step');
  const seen: PrefixRoundInput[] = [];
  const plans: Array<Map<string, number>> = [];
  // The real planner; the wrapper only records what the engine offered it and what it answered.
  const strategy = {
    ...base,
    prefixes: { ...base.prefixes!, plan: (input: PrefixRoundInput) => (seen.push(input), plans.push(base.prefixes!.plan(input)), plans.at(-1)!) },
  };
  // Prefixes score low (q = 0.1): a success's prefixes are the flippable ones (ρ = 0.1), a failure's are not (ρ = 0.9).
  const scorer = (hs: readonly { turns: readonly unknown[] }[]) => hs.map((h) => (h.turns.length === 0 ? 0.5 : 0.1));
  const res = await runStep({ prompts, env, policy, rng: createRng(5), strategy, scorer, settings: fast });
  assert.equal(seen.length, 1, 'one plan for the whole step');
  const [input] = seen;
  const m = res.rounds[0];
  assert.equal(input.promptId, '');
  assert.equal(
    input.m,
    [...m.values()].reduce((a, b) => a + b, 0),
  );
  assert.equal(
    input.budget,
    [...m.values()].reduce((a, mi) => a + Math.floor(mi * 2), 0),
    'Σ ⌊m_i · N⌋',
  );
  assert.ok(new Set(input.prefixes.map((c) => c.id.split('/')[0])).size > 1, 'prefixes of several prompts compete');
  // Exactly the solver's answer on the offered candidates (decision-weighted: w = turns after the prefix) …
  const { k } = solvePrefixes(
    input.prefixes.map((c) => ({ id: c.id, q: c.q, r: c.r, w: c.after ?? 1 })),
    input.budget,
  );
  assert.deepEqual(Object.fromEntries(plans[0]), Object.fromEntries(input.prefixes.map((c, i) => [c.id, k[i]]).filter(([, n]) => (n as number) > 0)));
  // … and the engine ran exactly that many continuations from each prefix, across prompts.
  const trees = new Map(res.trees.map((t) => [t.promptId, t]));
  for (const [id, K] of plans[0]) assert.equal(getNode(trees.get(id.split('/')[0])!, id).expanded, K, id);
  // Flip chances 0.9 (a success's prefix) against 0.1 (a failure's): the successes' prefixes come first.
  const won = input.prefixes.filter((c) => c.r === 1);
  const lost = input.prefixes.filter((c) => c.r === 0);
  assert.ok(won.length > 0 && lost.length > 0, `both kinds occur (${won.length} / ${lost.length})`);
  if (lost.some((c) => (plans[0].get(c.id) ?? 0) > 0))
    assert.ok(
      won.every((c) => (plans[0].get(c.id) ?? 0) > 0),
      'no failure’s prefix before every success’s prefix',
    );
  const c = treeCounts(res.trees);
  assert.equal(c.bare + c.continuation, 48, 'the whole budget is spent');
  assert.equal(res.spend.bare + res.spend.continuation, 48);
});

test('prefixBudget: the default is the paper’s per-prompt budget; shared needs the solver and one round; trace only', () => {
  assert.equal(createStrategy('trace', { budget: 9 }).prefixes!.schedule?.kind, 'per-prompt');
  assert.equal(createStrategy('trace', { budget: 9, prefixBudget: 'per-prompt' }).prefixes!.schedule?.kind, 'per-prompt');
  assert.throws(
    () => strategyFromConfig({ name: 'trace', budget: 9, prefixes: 'uniform', prefixBudget: 'shared' }),
    /prefixBudget: shared needs the prefix solver/,
  );
  assert.throws(
    () => strategyFromConfig({ name: 'trace', budget: 9, expansionRounds: 2, prefixBudget: 'shared' }),
    /prefixBudget: shared plans one expansion round/,
  );
  assert.throws(() => strategyFromConfig({ name: 'random-tree', budget: 9, prefixBudget: 'shared' }), /trace only/);
});
