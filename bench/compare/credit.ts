/**
 * Where a run's policy loss pushes, by turn depth and action type: the advantages the run's own
 * estimator gave (one term per rewarded leaf and turn on its path, as the update sees them), summed per
 * (depth, action type) and divided by the number of nonzero terms. Also, at every mixed anchor (a node
 * with ≥ 2 children holding rewarded leaves, not all equal), each child's V(child) − mean(anchor), by
 * the anchor's kind (root or prefix) and the child's action: does a sibling comparison after a prefix
 * favour answering over searching?
 *
 *   npx tsx bench/compare/credit.ts <run dir> [<run dir> …]      (runs of one arm: their seeds pool)
 */
import { createEstimator, forestFromTrees } from '../../src/advantage/index.ts';
import { RunStore } from '../../src/store/index.ts';
import { storedTrainConfig } from '../../src/train/index.ts';
import { getNode, rewardedLeaves, type RolloutTree } from '../../src/tree/index.ts';

const push = new Map<string, number>();
let terms = 0;
const siblings = new Map<string, number[]>();
const add = <K>(m: Map<K, number>, k: K, v: number) => m.set(k, (m.get(k) ?? 0) + v);

for (const dir of process.argv.slice(2)) {
  const store = RunStore.open(dir, { readonly: true });
  try {
    const config = storedTrainConfig(store);
    const estimator = createEstimator(config.estimator, { scale: config.advantageScale });
    for (let step = 0; step <= store.lastStep(); step++) {
      const trees = store.trees(step);
      const byPrompt = new Map(trees.map((t) => [t.promptId, t]));
      for (const leaf of estimator.estimate(forestFromTrees(trees))) {
        const tree = byPrompt.get(leaf.path[0]!.split('/')[0]!)!;
        leaf.path.forEach((id, k) => {
          const a = leaf.turns[k]!;
          if (a === 0 || Number.isNaN(a)) return;
          const node = getNode(tree, id);
          add(push, `${node.depth} ${node.turn!.action.type}`, a);
          terms++;
        });
      }
      for (const tree of trees) siblingDeviations(tree);
    }
  } finally {
    store.close();
  }
}

function siblingDeviations(tree: RolloutTree): void {
  const rewards = (id: string) => [...rewardedLeaves(tree, id)].map((l) => l.reward!);
  for (const node of Object.values(tree.nodes)) {
    const live = node.children.map((c) => [c, rewards(c)] as const).filter(([, r]) => r.length > 0);
    if (live.length < 2) continue;
    const all = live.flatMap(([, r]) => r);
    const mean = all.reduce((a, b) => a + b, 0) / all.length;
    if (all.every((r) => r === all[0])) continue;
    for (const [c, r] of live) {
      const key = `${node.parent === null ? 'root' : 'prefix'} → ${getNode(tree, c).turn!.action.type}`;
      siblings.set(key, [...(siblings.get(key) ?? []), r.reduce((a, b) => a + b, 0) / r.length - mean]);
    }
  }
}

console.log(`${process.argv.length - 2} runs, ${terms} nonzero loss terms`);
console.log('net advantage per loss term, by turn depth and action (positive = the update makes it likelier):');
for (const [k, v] of [...push].sort(([a], [b]) => a.localeCompare(b)))
  console.log(`  depth ${k.padEnd(12)} ${(v / terms >= 0 ? '+' : '') + (v / terms).toFixed(4)}`);
console.log('children of mixed anchors: mean of V(child) − mean(anchor), by anchor kind → the child’s action:');
for (const [k, xs] of [...siblings].sort(([a], [b]) => a.localeCompare(b)))
  console.log(`  ${k.padEnd(18)} n ${String(xs.length).padStart(5)}  ${(xs.reduce((a, b) => a + b, 0) / xs.length).toFixed(3)}`);
