/** Every allocation strategy from src/allocate drives the engine on the simulator (the shared contract). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { strategies, createStrategy, optionsFor, type StrategyName } from '../../src/allocate/index.ts';
import { Simulator } from '../../src/env/index.ts';
import { SimulatorPolicy } from '../../src/policy/index.ts';
import { runStep } from '../../src/rollout/index.ts';
import { treeFromJSON, treeToJSON } from '../../src/tree/index.ts';
import { createRng } from '../../src/util/rng.ts';
import { treeCounts } from './helpers.ts';

for (const name of strategies.names() as StrategyName[]) {
  test(`strategy ${name}: budget respected, trees valid, ledger equals the trees`, async () => {
    const env = new Simulator({ seed: 21 });
    const prompts = env.prompts(12);
    const B = 36;
    const strategy = createStrategy(name, optionsFor(name, { budget: B, continuations: 2, groupSize: 4, batchSize: name === 'dapo' ? 3 : undefined }));
    const res = await runStep({ prompts, env, policy: new SimulatorPolicy(env), rng: createRng(3), strategy, settings: { concurrency: 8 } });
    const c = treeCounts(res.trees);
    assert.equal(res.spend.bare, c.bare);
    assert.equal(res.spend.continuation, c.continuation);
    assert.ok(c.bare + c.continuation <= strategy.cap);
    assert.ok(c.bare > 0);
    for (const t of res.trees) assert.deepEqual(treeFromJSON(treeToJSON(t)), t);
    if (['trace', 'oracle', 'random-tree', 'entropy'].includes(name)) assert.ok(c.continuation > 0, 'tree strategies expand prefixes');
    else assert.equal(c.continuation, 0);
  });
}
