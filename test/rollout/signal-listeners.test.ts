import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { Simulator } from '../../src/env/index.ts';
import { SimulatorPolicy } from '../../src/policy/index.ts';
import { runStep } from '../../src/rollout/index.ts';
import { createRng } from '../../src/util/rng.ts';

test('a signal shared by many steps keeps no listeners from finished steps', async () => {
  const sim = new Simulator({ seed: 3 });
  const prompts = sim.prompts(4);
  const controller = new AbortController();
  for (let step = 0; step < 15; step++) {
    await runStep({
      prompts,
      env: sim,
      policy: new SimulatorPolicy(sim),
      rng: createRng(step),
      rootPlan: new Map(prompts.map((p) => [p.id, 2])),
      signal: controller.signal,
    });
  }
  assert.equal(getEventListeners(controller.signal, 'abort').length, 0);
});
