import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WorldEnv } from '../../src/env/index.ts';
import { initWeights, modelToGguf, Tokenizer, type LlamaConfig, type LlamaModel } from '../../src/tinylm/index.ts';
import { worldVocabulary } from '../../src/tinylm/world-text.ts';
import { createRng } from '../../src/util/rng.ts';

let cached: { env: WorldEnv; tokenizer: Tokenizer; model: LlamaModel } | undefined;

/**
 * A small world, its vocabulary, and a random-weight llama model over it (shared by the tinylm tests).
 * With overrides or another seed, weights are drawn with σ = `sigma` (large enough for peaked distributions).
 */
export function fixture(overrides: Partial<LlamaConfig> = {}, seed = 1, sigma = 0.3): { env: WorldEnv; tokenizer: Tokenizer; model: LlamaModel } {
  if (!cached) {
    const env = new WorldEnv({ seed: 7, questions: 300 });
    const vocab = worldVocabulary(env, { merges: 600 });
    const config: LlamaConfig = { vocab: vocab.pieces.length, dim: 32, layers: 2, heads: 2, ffn: 64, context: 512, ropeBase: 10000, eps: 1e-5 };
    cached = { env, tokenizer: new Tokenizer(vocab), model: { config, vocab, weights: initWeights(config, createRng(seed)) } };
  }
  const config = { ...cached.model.config, ...overrides };
  const model =
    Object.keys(overrides).length || seed !== 1 ? { config, vocab: cached.model.vocab, weights: initWeights(config, createRng(seed), sigma) } : cached.model;
  return { ...cached, model };
}

/** Writes the model to a fresh temporary GGUF file and returns its path. */
export function writeTemp(model: LlamaModel, name = 'model.gguf'): string {
  const dir = mkdtempSync(join(tmpdir(), 'tinylm-'));
  const path = join(dir, name);
  writeFileSync(path, modelToGguf(model));
  return path;
}

/** A two-step tiny-LM `train()` config on the fixture world (the tinylm run tests share it). */
export function shortRunConfig(model: string, seed: number) {
  return {
    seed,
    steps: 2,
    pool: 3,
    env: { questions: 300, seed: 7 },
    strategy: { name: 'trace', preset: 'paper', budget: 6, continuations: 2 },
    policy: { kind: 'tiny-lm', model, learningRate: 0.01, epochs: 1 },
    engine: { maxTurns: 2, concurrency: 4 },
    eval: { every: 10, questions: 2 },
  };
}
