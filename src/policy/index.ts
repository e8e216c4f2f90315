/**
 * Policies: the contract (act → one turn), the embedded trainable policy (the default: candidate
 * actions scored by a linear softmax over hashed features, PPO-style update), and the
 * OpenAI-compatible client for vLLM / SGLang / llama.cpp servers and hosted APIs.
 */
export * from './types.ts';
export { PolicyCallError } from './errors.ts';
export * from './embedded/index.ts';
export * from './openai/index.ts';
