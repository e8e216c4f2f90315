/**
 * The tiny-LM pipeline: a real language model on a CPU. GGUF v3 read/write (llama, F32), an SPM
 * vocabulary learned from the embedded world with the Search-R1 tags as single tokens, llama.cpp
 * inference through node-llama-cpp with exact per-token probabilities, and a trainable jax-js
 * re-implementation of the same forward pass (docs/tinylm.md).
 * A policy plugin: it sits at the level of src/policy (imports policy, env, tree, util; never rollout
 * or train) and is imported lazily by the training loop, because node-llama-cpp is heavy.
 */
export * from './gguf-format.ts';
export { writeGguf } from './gguf-write.ts';
export { readGguf } from './gguf-read.ts';
export { TAGS, TOKEN_TYPE, BOS_ID, EOS_ID, UNK_ID, buildVocabulary, splitWords, type Vocabulary, type VocabularyOptions } from './vocabulary.ts';
export { Tokenizer } from './tokenizer.ts';
export { initWeights, modelFromGguf, modelToGguf, type LayerWeights, type LlamaConfig, type LlamaModel, type LlamaWeights } from './model.ts';
export {
  disposeConsts,
  forwardConsts,
  fromParams,
  gridArrays,
  logits,
  pack,
  paddedVocab,
  ropeTables,
  toParams,
  tokenLogprobs,
  type ForwardConsts,
  type LayerParams,
  type PackedGrid,
  type Params,
} from './forward.ts';
export { createOpenAIApp, serveOpenAI, type OpenAIServerOptions, type RunningServer } from './openai-server.ts';
export { ContextOverflowError, LlamaEngine, loadLlama, type GenerateOptions, type Generated, type LlamaEngineOptions } from './llama-engine.ts';
export { MAX_SEQUENCES, sequencesFor, TinyLmPolicy, TinyLmSnapshotError, type TinyLmPolicyOptions } from './tiny-lm-policy.ts';
export { LmTrainer, rowLadder, type BatchStats, type RatioStats, type TrainerOptions, type TrainRow } from './trainer.ts';
export { promptIds, trajectorySequence, turnIds, type TokenSequence } from './sequence.ts';
export { demonstrations, warmStart, type Demonstration, type WarmStartOptions } from './warm-start.ts';
export { tinyPrompt, turnText, worldCorpus, worldVocabulary } from './world-text.ts';
