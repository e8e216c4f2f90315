/**
 * Budgets in turns and tokens (issue 33 §2): every arm spends the same budget in the unit it is given,
 * never more; continuations are priced at the suffix they regenerate, so tree arms buy more
 * trajectories than root-only arms at equal turns or tokens. On the simulator with its real policy.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createStrategy, optionsFor, type StrategyName } from '../../src/allocate/index.ts';
import { spentIn, type BudgetUnit } from '../../src/budget/index.ts';
import { Simulator } from '../../src/env/index.ts';
import { SimulatorPolicy } from '../../src/policy/index.ts';
import { priorRootCost, runStep } from '../../src/rollout/index.ts';
import { parseTrainConfig } from '../../src/train/index.ts';
import { createRng } from '../../src/util/rng.ts';
import { treeCounts } from './helpers.ts';

const ARMS: StrategyName[] = ['grpo', 'pcl', 'knapsack', 'trace', 'oracle', 'random-tree', 'entropy'];
const settings = { concurrency: 4, maxTurns: 6, maxTokensPerTurn: 8 };

async function step(name: StrategyName, unit: BudgetUnit, B: number, rootCost?: number) {
  const env = new Simulator({ seed: 21 });
  const strategy = createStrategy(name, optionsFor(name, { budget: B, unit, continuations: 2 }));
  const res = await runStep({
    prompts: env.prompts(24),
    env,
    policy: new SimulatorPolicy(env, { tokensPerTurn: 5 }),
    rng: createRng(4),
    strategy,
    settings,
    ...(rootCost ? { rootCost } : {}),
  });
  return { res, counts: treeCounts(res.trees) };
}

for (const [unit, B, most] of [
  ['turns', 150, settings.maxTurns],
  ['tokens', 750, settings.maxTurns * 5],
] as const) {
  test(`budget in ${unit}: every arm spends B = ${B} ${unit} and no more, within one trajectory's cost`, async () => {
    const trajectories: Record<string, number> = {};
    for (const name of ARMS) {
      // The price a training run measures after its first step: a bare rollout's mean cost here.
      const { res, counts } = await step(name, unit, B, unit === 'turns' ? 3 : 15);
      const spent = spentIn(res.spend, unit);
      assert.ok(spent <= B, `${name} overspent: ${spent} > ${B}`);
      assert.ok(spent > B - most, `${name} spent only ${spent} of ${B} ${unit}`);
      assert.equal(res.spend.bare + res.spend.continuation, counts.bare + counts.continuation, 'the ledger counts the trees');
      trajectories[name] = counts.bare + counts.continuation;
    }
    // A continuation regenerates only its suffix: at equal spend the tree arms run more trajectories.
    for (const tree of ['trace', 'random-tree', 'entropy'])
      assert.ok(trajectories[tree] > trajectories.grpo, `${tree} ${trajectories[tree]} vs grpo ${trajectories.grpo}`);
  });
}

test('at the stated prior (the first step of a run) no arm overspends', async () => {
  for (const name of ARMS) {
    const { res } = await step(name, 'tokens', 750);
    assert.ok(spentIn(res.spend, 'tokens') <= 750, name);
  }
});

test('roots are planned at the price of a bare rollout: M = ⌊B / price / (1 + N)⌋ for a tree arm', async () => {
  const { res } = await step('trace', 'turns', 150, 5);
  const planned = [...res.rounds[0].values()].reduce((a, b) => a + b, 0);
  assert.equal(planned, Math.floor(150 / 5 / 3));
  const prior = await step('grpo', 'turns', 150);
  assert.equal(
    [...prior.res.rounds[0].values()].reduce((a, b) => a + b, 0),
    Math.floor(150 / priorRootCost('turns', settings)),
    'the first step plans at the stated prior',
  );
});

test('in trajectories nothing changes: unit absent and unit trajectories plan and spend alike', async () => {
  const env = new Simulator({ seed: 21 });
  const run = (unit?: BudgetUnit) =>
    runStep({
      prompts: env.prompts(12),
      env,
      policy: new SimulatorPolicy(env),
      rng: createRng(3),
      strategy: createStrategy('trace', { budget: 36, ...(unit ? { unit } : {}) }),
      settings,
    });
  const [a, b] = [await run(), await run('trajectories')];
  assert.deepEqual(a.spend, b.spend);
  assert.deepEqual(a.trees, b.trees);
});

test('an unknown unit is rejected with its path, in the strategy and in the config', () => {
  assert.throws(() => createStrategy('grpo', { budget: 10, unit: 'dollars' as BudgetUnit }), /unit/);
  assert.throws(
    () => parseTrainConfig({ strategy: { name: 'trace', budget: 100, unit: 'dollars' } }),
    (e: Error) => /strategy\.unit/.test(e.message) && /trajectories/.test(e.message),
  );
});

test('dapo takes its budget in trajectories only: in tokens its target of ⌊B / G⌋ mixed groups would be meaningless', () => {
  assert.throws(
    () => parseTrainConfig({ strategy: { name: 'dapo', budget: 15000, unit: 'tokens' } }),
    (e: Error) => /strategy\.unit/.test(e.message) && /dapo counts its budget in trajectories/.test(e.message),
  );
  assert.doesNotThrow(() => parseTrainConfig({ strategy: { name: 'dapo', budget: 192 } }));
});

test('a priced plan does not depend on the order rollouts finish in (concurrency 1 and 4 plan alike)', async () => {
  const env = new Simulator({ seed: 21 });
  const run = (concurrency: number) =>
    runStep({
      prompts: env.prompts(24),
      env,
      policy: new SimulatorPolicy(env, { tokensPerTurn: 5 }),
      rng: createRng(4),
      strategy: createStrategy('trace', { budget: 1500, unit: 'tokens' }),
      settings: { ...settings, concurrency },
      rootCost: 15,
    });
  const [a, b] = [await run(1), await run(4)];
  assert.deepEqual(a.rounds, b.rounds, 'the same roots and leftover');
  assert.deepEqual(
    a.trees.map((t) => Object.keys(t.nodes).sort()),
    b.trees.map((t) => Object.keys(t.nodes).sort()),
    'the same continuations',
  );
});

test('a policy that reports more generated tokens than its call allows fails that turn, named, and is charged the call’s most', async () => {
  // A user's policy with a counting bug (the simulator's real policy, its count overstated): the step
  // must go on and say what happened, not fail inside the ledger.
  const env = new Simulator({ seed: 21 });
  const honest = new SimulatorPolicy(env, { tokensPerTurn: 5 });
  const buggy = {
    name: 'overcounting',
    act: async (ctx: Parameters<typeof honest.act>[0]) => ({ ...(await honest.act(ctx)), generatedTokens: ctx.maxTokens + 3 }),
  };
  const res = await runStep({
    prompts: env.prompts(2),
    env,
    policy: buggy,
    rng: createRng(4),
    rootPlan: new Map(env.prompts(2).map((p) => [p.id, 1])),
    settings,
  });
  const errors = res.trees.flatMap((t) => Object.values(t.nodes).flatMap((n) => (n.turn?.error ? [n.turn.error] : [])));
  assert.equal(errors.length, 2, 'each trajectory’s first turn fails');
  for (const e of errors) {
    assert.equal(e.code, 'server_error');
    assert.match(e.message, /reported 11 generated tokens for a call of at most 8 \(engine\.maxTokensPerTurn\)/);
  }
  assert.deepEqual([res.spend.turns, res.spend.tokens], [2, 16], 'each failed call is charged maxTokensPerTurn');
});
