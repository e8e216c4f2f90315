/**
 * Writes the tiny llama this example trains: a random-weight `llama` GGUF (F32) whose SPM vocabulary
 * is learned from the embedded world's text (the environment `trace-rl rollout` uses by default).
 * Usage: npx tsx make-model.ts OUT.gguf
 */
import { writeFileSync } from 'node:fs';
import { WorldEnv } from '../../src/env/index.ts';
import { initWeights, modelToGguf, worldVocabulary, type LlamaConfig } from '../../src/tinylm/index.ts';
import { createRng } from '../../src/util/rng.ts';

const out = process.argv[2];
if (!out) {
  process.stderr.write('usage: make-model.ts OUT.gguf\n');
  process.exit(2);
}
const vocab = worldVocabulary(new WorldEnv({ seed: 7, questions: 300 }), { merges: 600 });
const config: LlamaConfig = { vocab: vocab.pieces.length, dim: 32, layers: 2, heads: 2, ffn: 64, context: 1024, ropeBase: 10000, eps: 1e-5 };
writeFileSync(out, modelToGguf({ config, vocab, weights: initWeights(config, createRng(4), 0.3) }));
