/**
 * Advantage estimators on a training-step-sized batch: 1,024 prompts × 16 bare rollouts × 8 turns, plus
 * 2 continuations per rollout branched after a random turn (TRACE's prefix expansion): 49,152 leaves,
 * ~280k nodes. Reports min/median/max over repeated runs of forest building and of each estimator.
 * Run: npx tsx bench/advantages/run.ts
 */
import { availableParallelism } from 'node:os';
import { buildForest, createEstimator, estimatorNames, type ForestNode } from '../../src/advantage/index.ts';
import { createRng } from '../../src/util/rng.ts';

const PROMPTS = 1024;
const ROLLOUTS = 16;
const TURNS = 8;
const CONTINUATIONS = 2;
const REPEATS = 7;

function batch(): ForestNode[] {
  const rng = createRng(2026);
  const nodes: ForestNode[] = [];
  for (let p = 0; p < PROMPTS; p++) {
    const q = `q${p}`;
    nodes.push({ id: q, parent: null });
    for (let j = 0; j < ROLLOUTS; j++) {
      let parent = q;
      const path: string[] = [];
      for (let t = 0; t < TURNS; t++) {
        const id = `${parent}/${j}`;
        nodes.push(t === TURNS - 1 ? { id, parent, reward: rng.int(2), length: 50 + rng.int(400) } : { id, parent });
        path.push(id);
        parent = id;
      }
      for (let k = 0; k < CONTINUATIONS; k++) {
        let from = path[rng.int(TURNS - 1)];
        for (let t = 0; t < 1 + rng.int(4); t++) {
          const id = `${from}/c${k}.${t}`;
          nodes.push({ id, parent: from });
          from = id;
        }
        const last = nodes[nodes.length - 1];
        last.reward = rng.int(2);
        last.length = 50 + rng.int(400);
      }
    }
  }
  return nodes;
}

function time(fn: () => void): number[] {
  const ms: number[] = [];
  for (let r = 0; r < REPEATS; r++) {
    const t0 = process.hrtime.bigint();
    fn();
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return ms.sort((a, b) => a - b);
}

const fmt = (ms: number[]) => `min ${ms[0].toFixed(1)} / median ${ms[ms.length >> 1].toFixed(1)} / max ${ms[ms.length - 1].toFixed(1)} ms`;

const nodes = batch();
const forest = buildForest(nodes);
console.log(`date ${new Date().toISOString()}, node ${process.version}, nproc ${availableParallelism()}`);
console.log(
  `batch: ${PROMPTS} prompts × ${ROLLOUTS} rollouts × ${TURNS} turns + ${CONTINUATIONS} continuations each: ${nodes.length} nodes, ${forest.rewardedLeaves.length} leaves; ${REPEATS} runs`,
);
console.log(`buildForest: ${fmt(time(() => buildForest(nodes)))}`);
for (const name of estimatorNames()) {
  const est = createEstimator(name);
  console.log(`${name}: ${fmt(time(() => est.estimate(forest)))}`);
}
