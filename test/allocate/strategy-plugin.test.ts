import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import { parseStrategyConfig, strategies, strategyFromConfig } from '../../src/allocate/index.ts';
import type { RootCandidate } from '../../src/allocate/types.ts';
import { parseTrainConfig } from '../../src/train/config.ts';

/**
 * A plugin's strategy (what lab/ registers): registered before the first configuration is parsed (the
 * family's schema is built once, on first use), it parses, builds and plans like a built-in one.
 */
const schema = z.strictObject({ name: z.literal('every-other'), unit: z.literal('trajectories').default('trajectories'), budget: z.number().int().positive() });
strategies.register({
  name: 'every-other',
  schema,
  build: ((o: z.output<typeof schema>) => ({
    name: 'every-other',
    cap: o.budget,
    roots: { plan: (input: { candidates: readonly RootCandidate[] }) => new Map(input.candidates.filter((_, i) => i % 2 === 0).map((c) => [c.promptId, 2])) },
  })) as never,
  rootBudget: (() => ({ kind: 'uniform' })) as never,
});

test('a plugin’s strategy registers through the family and parses like a built-in one (name, strict options)', () => {
  const s = strategyFromConfig({ name: 'every-other', budget: 8 });
  const candidates = ['a', 'b', 'c', 'd'].map((promptId) => ({ promptId, v: 0.5 }));
  const plan = s.roots.plan({ candidates, round: 0, remaining: 8, results: new Map(), rng: undefined as never });
  assert.deepEqual([...plan.keys()], ['a', 'c']);
  assert.throws(() => parseStrategyConfig({ name: 'every-other', budget: 8, groupSize: 3 }), /groupSize/);
  assert.throws(() => parseStrategyConfig({ name: 'every-others', budget: 8 }), /every-other/);
  assert.equal(parseTrainConfig({ strategy: { name: 'every-other', budget: 8 } }).strategy.name, 'every-other');
  assert.throws(
    () => strategies.register({ name: 'trace', schema, build: (() => s) as never, rootBudget: (() => ({ kind: 'uniform' })) as never }),
    /exists already/,
  );
});
