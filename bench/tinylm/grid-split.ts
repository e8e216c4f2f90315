/**
 * How the tiny LM's PPO update splits a step's batch into Adam steps (issue 18, diagnosis): reads a
 * finished tiny-LM run folder, rebuilds each step's trained rows exactly as TinyLmPolicy.update does
 * (policySamples → rows with a non-zero advantage → pack on the trainer's row ladder, 4,096 positions a
 * grid) and reports, per step, the grids (each its own Adam step in LmTrainer.fit) and how many
 * positive- and negative-advantage trajectories each holds.
 *   npx tsx bench/tinylm/grid-split.ts <run folder> [--grid 4096]
 */
import { readFileSync } from 'node:fs';
import { createEstimator } from '../../src/advantage/index.ts';
import { RunStore } from '../../src/store/index.ts';
import { modelFromGguf, pack, rowLadder, Tokenizer, trajectorySequence } from '../../src/tinylm/index.ts';
import { storedTrainConfig } from '../../src/train/index.ts';
import { policySamples } from '../../src/train/policy-samples.ts';

const dir = process.argv[2]!;
const gi = process.argv.indexOf('--grid');
const gridTokens = gi > 0 ? Number(process.argv[gi + 1]) : 4096;
const store = RunStore.open(dir);
const config = storedTrainConfig(store);
if (config.policy.kind !== 'tiny-lm') throw new Error(`${dir}: not a tiny-lm run (policy.kind ${config.policy.kind})`);
const model = modelFromGguf(new Uint8Array(readFileSync(config.policy.model)), config.policy.model);
const tokenizer = new Tokenizer(model.vocab);
const estimator = createEstimator(config.estimator, { scale: config.advantageScale });
let steps = 0;
let multi = 0;
let oneSided = 0;
let grids = 0;
for (const { step } of store.steps()) {
  const trees = store.trees(step);
  const pool = trees.map((t) => ({ id: t.promptId, question: t.prompt }) as never);
  const samples = policySamples(estimator, trees, pool);
  const rows = samples
    .map((s) => {
      const seq = trajectorySequence(tokenizer, s.prompt, s.turns);
      return { seq, adv: s.advantages.find((a, i) => a !== 0 && !s.turns[i]!.error) ?? 0 };
    })
    .filter((r) => r.adv !== 0)
    .sort((a, b) => b.seq.ids.length - a.seq.ids.length);
  if (rows.length === 0) continue;
  const lengths = rows.map((r) => r.seq.mask.lastIndexOf(1));
  const packed = pack(
    rows.map((r) => r.seq.ids),
    lengths,
    { rowLengths: rowLadder(model.config.context), gridTokens },
  );
  const parts = packed.map((g) => {
    const pos = g.slots.filter((s) => rows[s.index]!.adv > 0).length;
    return { T: g.T, pos, neg: g.slots.length - pos };
  });
  steps++;
  grids += parts.length;
  if (parts.length > 1) multi++;
  oneSided += parts.filter((p) => p.pos === 0 || p.neg === 0).length;
  console.log(`step ${step}: ${rows.length} trained trajectories, ${parts.length} Adam step(s): ${parts.map((p) => `T${p.T} +${p.pos}/−${p.neg}`).join(', ')}`);
}
console.log(
  `${dir}: ${steps} steps with a gradient, ${grids} Adam steps (${multi} steps split into several), ${oneSided} of the Adam steps see only one sign of advantage`,
);
store.close();
