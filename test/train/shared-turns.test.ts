/**
 * policy.sharedTurns: how turns shared by several leaves (expanded prefixes) enter the policy loss.
 * Real trace step on the real simulator; the samples are what the step hands to policy.update.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createEstimator } from '../../src/advantage/index.ts';
import { createStrategy } from '../../src/allocate/index.ts';
import { Simulator } from '../../src/env/index.ts';
import { SimulatorPolicy } from '../../src/policy/index.ts';
import { runStep } from '../../src/rollout/index.ts';
import { parseTrainConfig } from '../../src/train/config.ts';
import { leafWeight, policySamples } from '../../src/train/policy-samples.ts';
import { createRng } from '../../src/util/rng.ts';

/** One real trace step on the simulator: trees with expanded prefixes, so some turns are shared. */
async function expandedStep() {
  const env = new Simulator({ seed: 7 });
  const prompts = env.prompts(8);
  const { trees } = await runStep({
    prompts,
    env,
    policy: new SimulatorPolicy(env),
    rng: createRng(1),
    strategy: createStrategy('trace', { budget: 48 }),
    settings: { retry: { baseDelayMs: 1, maxDelayMs: 2 } },
  });
  return { prompts, trees };
}

test('sharedTurns once: every tree node is one nonzero term with its per-node advantage; per-leaf repeats shared turns', async () => {
  const { prompts, trees } = await expandedStep();
  const estimator = createEstimator('trace');
  const perLeaf = policySamples(estimator, trees, prompts, 'per-leaf');
  const once = policySamples(estimator, trees, prompts, 'once');
  assert.equal(once.length, perLeaf.length, 'one sample per leaf either way');
  const terms = (samples: typeof once) => samples.reduce((n, s) => n + s.advantages.filter((a) => a !== 0 && !Number.isNaN(a)).length, 0);
  assert.ok(terms(once) < terms(perLeaf), 'shared prefix turns counted once, not once per leaf');
  // Per node: the first occurrence keeps the per-leaf value, later ones are 0.
  const adv = estimator.estimate((await import('../../src/advantage/index.ts')).forestFromTrees(trees));
  const first = new Map<string, number>();
  adv.forEach((a, k) =>
    a.path.forEach((id, i) => {
      if (!first.has(id)) {
        first.set(id, a.turns[i]);
        assert.equal(once[k].advantages[i], perLeaf[k].advantages[i]);
      } else {
        assert.equal(once[k].advantages[i], 0);
        assert.equal(perLeaf[k].advantages[i], first.get(id), 'trace gives a shared node the same advantage in every leaf');
      }
    }),
  );
  assert.ok([...first.keys()].length < adv.reduce((n, a) => n + a.path.length, 0), 'some node is shared');
});

test('sharedTurns once needs the trace estimator', () => {
  assert.throws(() => parseTrainConfig({ estimator: 'grpo', policy: { sharedTurns: 'once' } }), /policy\.sharedTurns: once needs estimator trace/);
  assert.equal((parseTrainConfig({ policy: { sharedTurns: 'once' } }).policy as { sharedTurns?: string }).sharedTurns, 'once');
});

test('sharedTurns importance: each leaf scaled by Π 1/children over its branch points, so one bare rollout’s leaves weigh 1 together', async () => {
  const { prompts, trees } = await expandedStep();
  const estimator = createEstimator('grpo');
  const perLeaf = policySamples(estimator, trees, prompts, 'per-leaf');
  const weighted = policySamples(estimator, trees, prompts, 'importance');
  const adv = estimator.estimate((await import('../../src/advantage/index.ts')).forestFromTrees(trees));
  const byPrompt = new Map(trees.map((t) => [t.promptId, t]));
  // Total weight per bare rollout (the first node of a path): the leaves below it sum to 1.
  const perBare = new Map<string, number>();
  let expanded = 0;
  adv.forEach((a, k) => {
    const tree = byPrompt.get(a.path[0]!.split('/')[0]!)!;
    const w = leafWeight(tree, a.path);
    if (w < 1) expanded++;
    perBare.set(a.path[0]!, (perBare.get(a.path[0]!) ?? 0) + w);
    weighted[k]!.advantages.forEach((x, i) => assert.ok(Math.abs(x - w * perLeaf[k]!.advantages[i]!) < 1e-15));
  });
  assert.ok(expanded > 0, 'some leaf lies below a branch point');
  // Leaves that failed without a reward have no sample, so a bare rollout's leaves sum to at most 1.
  for (const [id, total] of perBare) assert.ok(total <= 1 + 1e-12 && total > 0, `${id}: ${total}`);
  assert.ok([...perBare.values()].filter((t) => Math.abs(t - 1) < 1e-12).length > perBare.size / 2, 'most bare rollouts weigh exactly 1');
});

test('leafWeight on a hand-made tree: a prefix continued twice (3 children) and below it a node with 2', () => {
  const tree = { promptId: 'q', nodes: {} } as unknown as Parameters<typeof leafWeight>[0];
  const node = (id: string, children: string[]) => ((tree as unknown as { nodes: Record<string, unknown> }).nodes[id] = { id, children });
  node('q', ['q/0', 'q/1']);
  node('q/0', ['q/0/0', 'q/0/1', 'q/0/2']);
  node('q/0/0', ['q/0/0/0', 'q/0/0/1']);
  for (const leaf of ['q/1', 'q/0/1', 'q/0/2', 'q/0/0/0', 'q/0/0/1']) node(leaf, []);
  assert.equal(leafWeight(tree, ['q/1']), 1, 'the root is not a branch point: bare rollouts weigh 1');
  assert.equal(leafWeight(tree, ['q/0', 'q/0/1']), 1 / 3);
  assert.equal(leafWeight(tree, ['q/0', 'q/0/0', 'q/0/0/1']), 1 / 6);
});
