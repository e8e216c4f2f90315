/**
 * Builds the tiny-LM warm-start checkpoint, reproducibly (same seed → same file):
 *   npx tsx bench/tinylm/warm-start.ts [--out bench/tinylm/warm-start.gguf] [--epochs 2]
 * World: seed 7, 1500 questions, top-3 search (the `trace-rl train` defaults). Model: llama d64,
 * 2 layers, 4 heads, FFN 128, vocabulary of the world (500 merges), context 768. Demonstrations: the
 * scripted gold-path policy with noise 0.35 on the first 800 training questions. Prints the greedy
 * held-out accuracy on the first 100 test questions at the end.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { WorldEnv } from '../../src/env/index.ts';
import { greedyAccuracy } from '../../src/rollout/index.ts';
import { modelToGguf } from '../../src/tinylm/index.ts';
import { TinyLmPolicy } from '../../src/tinylm/tiny-lm-policy.ts';
import { warmStart } from '../../src/tinylm/warm-start.ts';
import { initJax } from '../../src/util/jax.ts';
import { createRng } from '../../src/util/rng.ts';

const { values } = parseArgs({ options: { out: { type: 'string', default: 'bench/tinylm/warm-start.gguf' }, epochs: { type: 'string', default: '2' }, questions: { type: 'string', default: '800' } } });
await initJax();
const t0 = performance.now();
const env = new WorldEnv({ seed: 7, questions: 1500, topK: 3, maxTurns: 6 });
let trained = 0;
const { model, demos } = await warmStart({
  env,
  shape: { dim: 64, layers: 2, heads: 4, ffn: 128, context: 768, ropeBase: 10000, eps: 1e-5 },
  merges: 500,
  questions: Number(values.questions),
  noise: 0.35,
  epochs: Number(values.epochs),
  learningRate: 2e-3,
  batch: 4,
  seed: 0,
  onBatch: ({ epoch, batch, batches, loss, tokens }) => {
    trained += tokens;
    if (batch % 10 === 0 || batch === batches - 1) process.stderr.write(`epoch ${epoch} batch ${batch + 1}/${batches} loss ${loss.toFixed(3)} (${((performance.now() - t0) / 1000).toFixed(0)} s, ${trained} trained tokens)\n`);
  },
});
const bytes = modelToGguf(model, 'trace-rl tiny-lm warm start');
writeFileSync(values.out!, bytes);
const trainSeconds = (performance.now() - t0) / 1000;
const solvedDemos = demos.filter((d) => d.reward === 1).length / demos.length;
const policy = TinyLmPolicy.fromBytes(bytes);
const acc = await greedyAccuracy({ env, policy, prompts: env.test.slice(0, 100), rng: createRng(0).fork('eval'), settings: { concurrency: 4 } });
await policy.dispose();
console.log(JSON.stringify({ out: values.out, bytes: bytes.length, vocab: model.config.vocab, demos: demos.length, demoSuccess: solvedDemos, trainedTokens: trained, trainSeconds: Math.round(trainSeconds), testAccuracy100: acc }));
